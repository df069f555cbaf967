#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "mlt/config/settings.h"
#include "mlt/util/error.h"
#include "mlt/util/paths.h"

namespace mlt {
namespace {

bool has_text(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

using Env = std::vector<std::pair<std::string, std::string>>;
using Strings = std::vector<std::string>;

// A fresh directory under $TMPDIR for one test, removed afterwards.
class SettingsTest : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string tmpl =
            (std::filesystem::temp_directory_path() / "mlt-settings-XXXXXX").string();
        ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    std::string write(const std::string& name, const std::string& text) {
        std::string path = dir_ + "/" + name;
        write_file_atomic(path, text, 0644);
        return path;
    }

    SshSettings load(const std::string& user_yaml, const std::string& model_yaml = {}) {
        SettingsSources sources;
        sources.user_settings_path = write("user.yaml", user_yaml);
        if (!model_yaml.empty()) sources.model_settings_path = write("model.ssh.yaml", model_yaml);
        warnings_.clear();
        return load_settings(sources, &warnings_);
    }

    // The message of the error loading `user_yaml` throws, with the file path cut to "u".
    std::pair<std::string, std::string> error_of(const std::string& user_yaml) {
        try {
            load(user_yaml);
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::config);
            EXPECT_EQ(e.code(), exit_code::kUsage);
            std::string what = e.what();
            std::string path = dir_ + "/user.yaml";
            if (what.compare(0, path.size(), path) == 0) what = "u" + what.substr(path.size());
            return {what, e.hint()};
        }
        ADD_FAILURE() << "no error for:\n" << user_yaml;
        return {};
    }

    std::string dir_;
    std::vector<SettingsWarning> warnings_;
};

TEST_F(SettingsTest, DefaultsWhenFilesAreMissingOrEmpty) {
    SettingsSources sources{dir_ + "/nope.yaml", dir_ + "/nope.ssh.yaml", dir_ + "/nope.py"};
    std::vector<SettingsWarning> warnings;
    for (const SshSettings& s :
         {load_settings(sources, &warnings), load(""), load("ssh:\n"), load("ssh: null\n# c\n")}) {
        EXPECT_EQ(s.config_path, "~/.ssh/config");
        EXPECT_EQ(s.remote_dir, ".");
        EXPECT_FALSE(s.create_venv.has_value());
        EXPECT_TRUE(mlt::effective_create_venv(s));  // MLTK's default for `mltk train`
        EXPECT_FALSE(s.venv_packages.has_value());
        EXPECT_TRUE(s.connections.empty());
        EXPECT_EQ(s.train_cmd, "mltk train {model}");
        EXPECT_EQ(s.remote_log_dir, "");
        EXPECT_EQ(s.sync_every, 0);
        EXPECT_EQ(s.host_key_checking, HostKeyChecking::accept_new);
        EXPECT_EQ(s.master_addr, "");
        EXPECT_EQ(s.master_port, 0);
        EXPECT_EQ(s.price_per_hour, 0);
        EXPECT_EQ(s.workspace, "");
        EXPECT_EQ(s.compression, "zstd");
    }
    EXPECT_TRUE(warnings.empty());
    EXPECT_TRUE(warnings_.empty());
}

TEST_F(SettingsTest, ReadsEveryKeyAndIgnoresMltkKeys) {
    SshSettings s = load(R"(commander:
  device: efr32
ssh:
  config_path: ~/my_ssh_config
  remote_dir: ~/ws
  create_venv: yes
  venv_packages: [silabs-mltk, torch]
  connection: {hostname: gpu, port: 2222, username: root, key_filename: ~/.ssh/id_gpu}
  environment: [A=1]
  upload_files: [data/*.csv]
  startup_cmds: [pip install x]
  download_files: [results/**]
  shutdown_cmds: [echo done]
  train_cmd: "python train.py {model}"
  remote_log_dir: logs/{model}
  model_paths: [~/models]
  sync_every: 300
  host_key_checking: no
  nodes: {master_addr: "", master_port: 29500}
  price_per_hour: 0.0
  workspace: ~/src/proj
  compression: zstd
)");
    EXPECT_TRUE(warnings_.empty());
    EXPECT_EQ(s.config_path, "~/my_ssh_config");
    EXPECT_EQ(s.remote_dir, "~/ws");
    EXPECT_EQ(s.create_venv, true);
    EXPECT_EQ(s.venv_packages, (Strings{"silabs-mltk", "torch"}));
    ASSERT_EQ(s.connections.size(), 1u);
    EXPECT_EQ(s.connections[0].hostname, "gpu");
    EXPECT_EQ(s.connections[0].port, 2222);
    EXPECT_EQ(s.connections[0].username, "root");
    EXPECT_EQ(s.connections[0].key_filename, "~/.ssh/id_gpu");
    EXPECT_EQ(s.environment, (Env{{"A", "1"}}));
    EXPECT_EQ(s.upload_files, (Strings{"data/*.csv"}));
    EXPECT_EQ(s.startup_cmds, (Strings{"pip install x"}));
    EXPECT_EQ(s.download_files, (Strings{"results/**"}));
    EXPECT_EQ(s.shutdown_cmds, (Strings{"echo done"}));
    EXPECT_EQ(s.train_cmd, "python train.py {model}");
    EXPECT_EQ(s.remote_log_dir, "logs/{model}");
    EXPECT_EQ(s.model_paths, (Strings{"~/models"}));
    EXPECT_EQ(s.sync_every, 300);
    EXPECT_EQ(s.host_key_checking, HostKeyChecking::no);
    EXPECT_EQ(s.master_addr, "");
    EXPECT_EQ(s.master_port, 29500);
    EXPECT_DOUBLE_EQ(s.price_per_hour, 0);
    EXPECT_EQ(s.workspace, "~/src/proj");
    EXPECT_EQ(s.compression, "zstd");
}

TEST_F(SettingsTest, TypeErrorsNameFileLineColumnAndHint) {
    struct Case {
        std::string yaml;
        std::string message;
        std::string hint;  // substring; empty: not checked
    };
    const std::vector<Case> cases = {
        {"ssh:\n  create_venv: maybe\n",
         "u:2:16: ssh.create_venv must be true or false, got 'maybe'", "`create_venv: true`"},
        {"ssh:\n  connection:\n    port: 70000\n",
         "u:3:11: ssh.connection.port must be an integer from 1 to 65535, got '70000'",
         "`port: 22`"},
        {"ssh:\n  connection:\n    port: 22.5\n",
         "u:3:11: ssh.connection.port must be an integer from 1 to 65535, got '22.5'", ""},
        {"ssh:\n  sync_every: -1\n",
         "u:2:15: ssh.sync_every must be an integer from 0 to 604800, got '-1'", "`sync_every: 0`"},
        {"ssh:\n  sync_every: 0x10\n",
         "u:2:15: ssh.sync_every must be an integer from 0 to 604800, got '0x10'", ""},
        {"ssh:\n  sync_every: .inf\n",
         "u:2:15: ssh.sync_every must be an integer from 0 to 604800, got '.inf'", ""},
        // Above the bound: 1e300 seconds once overflowed the int it is rounded into (fuzzer find).
        {"ssh:\n  connection:\n    timeout: 1e300\n",
         "u:3:14: ssh.connection.timeout must be a number from 1 to 86400, got '1e300'", ""},
        {"ssh:\n  sync_every: 604801\n",
         "u:2:15: ssh.sync_every must be an integer from 0 to 604800, got '604801'", ""},
        {"ssh:\n  price_per_hour: cheap\n",
         "u:2:19: ssh.price_per_hour must be a number from 0 to 1000000, got 'cheap'", ""},
        {"ssh:\n  remote_dir: [a, b]\n",
         "u:2:15: ssh.remote_dir must be a non-empty string, got a list", "`remote_dir: "},
        {"ssh:\n  remote_dir: ''\n", "u:2:15: ssh.remote_dir must be a non-empty string, got ''",
         ""},
        {"ssh:\n  upload_files: data/*.csv\n",
         "u:2:17: ssh.upload_files must be a list of strings, got 'data/*.csv'",
         "`upload_files: ["},
        {"ssh:\n  startup_cmds:\n    - echo ok\n    - {a: 1}\n",
         "u:4:7: ssh.startup_cmds entries must be strings, got a mapping", ""},
        {"ssh:\n  host_key_checking: ask\n",
         "u:2:22: ssh.host_key_checking must be one of yes, accept-new, no, got 'ask'",
         "`host_key_checking: accept-new`"},
        {"ssh:\n  compression: xz\n",
         "u:2:16: ssh.compression must be one of none, gzip or zstd, got 'xz'",
         "`compression: none`"},
        {"ssh:\n  nodes: [a]\n",
         "u:2:10: ssh.nodes must be a mapping (hosts, master_addr, master_port), got a list", ""},
        {"ssh:\n  nodes:\n    master_port: -1\n",
         "u:3:18: ssh.nodes.master_port must be an integer from 0 to 65535, got '-1'", ""},
        {"ssh:\n  connection: host\n",
         "u:2:15: ssh.connection must be a mapping (hostname, port, username, key_filename) or a "
         "list of such mappings, got 'host'",
         ""},
        {"ssh:\n  connection:\n    - hostname: a\n    - b\n",
         "u:4:7: ssh.connection[1] must be a mapping (hostname, port, username, key_filename) or "
         "a list of such mappings, got 'b'",
         ""},
        {"ssh:\n  connection:\n    - hostname: a\n    - port: x\n",
         "u:4:13: ssh.connection[1].port must be an integer from 1 to 65535, got 'x'", ""},
        {"ssh:\n  environment: A=1\n",
         "u:2:16: ssh.environment must be a list of NAME=VALUE strings or a mapping of NAME: "
         "VALUE, "
         "got 'A=1'",
         ""},
        {"ssh:\n  environment: [A=1, 1X=2]\n",
         "u:2:22: ssh.environment entry '1X=2': '1X' is not a valid variable name", "letters"},
        {"ssh:\n  environment:\n    - =x\n",
         "u:3:7: ssh.environment entry '=x': '' is not a valid variable name", ""},
        {"ssh:\n  environment:\n    BAD-NAME: 1\n",
         "u:3:5: ssh.environment: 'BAD-NAME' is not a valid variable name", ""},
        {"ssh:\n  environment:\n    A: [1]\n",
         "u:3:8: ssh.environment.A must be a string, number or bool, got a list", ""},
        {"ssh: [a]\n", "u:1:6: ssh must be a mapping of settings, got a list", ""},
        {"- a\n", "u:1:1: a settings file must be a mapping, got a list", "`ssh:`"},
        {"model_paths: ~/x\n", "u:1:14: model_paths must be a list of strings, got '~/x'", ""},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.yaml);
        auto [what, hint] = error_of(c.yaml);
        EXPECT_EQ(what, c.message);
        EXPECT_NE(hint.find(c.hint), std::string::npos) << hint;
    }
}

TEST_F(SettingsTest, MalformedYamlNamesLocation) {
    auto [what, hint] = error_of("ssh:\n  remote_dir: a: b\n");
    EXPECT_EQ(what, "u:2:16: malformed YAML: illegal map value");
    EXPECT_FALSE(hint.empty());
    auto [what2, hint2] = error_of("ssh:\n  upload_files: [a, b\n  x: 1\n");
    EXPECT_EQ(what2.rfind("u:", 0), 0u) << what2;
    EXPECT_NE(what2.find(": malformed YAML: "), std::string::npos) << what2;
}

TEST_F(SettingsTest, UnknownKeysWarnWithLocationAndSuggestion) {
    SshSettings s = load(
        "ssh:\n  remotedir: x\n  completely_unknown: 1\n  hostname: h\n"
        "  connection: {hostname: h, prot: 22}\n  nodes: {master_adr: a}\n");
    EXPECT_EQ(s.remote_dir, ".");
    ASSERT_EQ(warnings_.size(), 5u);
    EXPECT_EQ(warnings_[0].file, dir_ + "/user.yaml");
    EXPECT_EQ(warnings_[0].line, 2);
    EXPECT_EQ(warnings_[0].column, 3);
    EXPECT_EQ(warnings_[0].message,
              "unknown setting ssh.remotedir (ignored); did you mean ssh.remote_dir?");
    EXPECT_EQ(warnings_[1].line, 3);
    EXPECT_EQ(warnings_[1].message, "unknown setting ssh.completely_unknown (ignored)");
    EXPECT_EQ(warnings_[2].message,
              "unknown setting ssh.hostname (ignored); did you mean ssh.connection.hostname?");
    EXPECT_EQ(warnings_[3].line, 5);
    EXPECT_EQ(warnings_[3].column, 29);
    EXPECT_EQ(warnings_[3].message,
              "unknown setting ssh.connection.prot (ignored); did you mean ssh.connection.port?");
    EXPECT_EQ(
        warnings_[4].message,
        "unknown setting ssh.nodes.master_adr (ignored); did you mean ssh.nodes.master_addr?");
}

// MLTK hands `connection` to paramiko: the keys with a meaning here are read, the others
// warn once each, and an empty string is "not set" (MLTK's own test writes key_filename: '').
TEST_F(SettingsTest, ConnectionTakesParamikoKeys) {
    SshSettings s = load(
        "ssh:\n  connection:\n    hostname: localhost\n    port: 22\n    key_filename: ''\n"
        "    username: u\n    password: \"p w#1\"\n    passphrase: 1234\n    timeout: 2.5\n"
        "    look_for_keys: false\n    allow_agent: no\n    compress: true\n"
        "    banner_timeout: 30\n    disabled_algorithms: {pubkeys: [rsa-sha2-512]}\n");
    ASSERT_EQ(s.connections.size(), 1u);
    const ConnectionSettings& c = s.connections[0];
    EXPECT_EQ(c.key_filename, "");
    EXPECT_EQ(c.password, "p w#1");
    EXPECT_EQ(c.passphrase, "1234");  // a number is kept as written
    EXPECT_EQ(c.timeout_s, 3);        // rounded up
    EXPECT_EQ(c.look_for_keys, false);
    EXPECT_EQ(c.allow_agent, false);
    ASSERT_EQ(warnings_.size(), 3u);
    EXPECT_EQ(warnings_[0].line, 12);
    EXPECT_EQ(warnings_[0].message,
              "ssh.connection.compress is a paramiko option that mlt does not use (ignored)");
    EXPECT_EQ(warnings_[1].message,
              "ssh.connection.banner_timeout is a paramiko option that mlt does not use (ignored)");
    EXPECT_EQ(warnings_[2].message,
              "ssh.connection.disabled_algorithms is a paramiko option that mlt does not use "
              "(ignored)");

    s = load("ssh:\n  connection: {password: '', passphrase: '', hostname: ''}\n");
    EXPECT_EQ(s.connections.at(0).password, std::nullopt);
    EXPECT_EQ(s.connections.at(0).passphrase, std::nullopt);
    EXPECT_EQ(s.connections.at(0).hostname, "");
    EXPECT_EQ(s.connections.at(0).look_for_keys, std::nullopt);
}

TEST_F(SettingsTest, ConnectionSecretsNeverReachAMessage) {
    auto [what, hint] = error_of("ssh:\n  connection:\n    password: [hunter2]\n");
    EXPECT_EQ(what, "u:3:15: ssh.connection.password must be a string, got a list");
    EXPECT_EQ(hint.find("hunter2"), std::string::npos) << hint;
    load("ssh:\n  connection:\n    password: hunter2\n    password: hunter3\n");
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_EQ(warnings_[0].message.find("hunter"), std::string::npos) << warnings_[0].message;
    auto [what2, hint2] = error_of("ssh:\n  connection:\n    timeout: 0.5\n");
    EXPECT_EQ(what2, "u:3:14: ssh.connection.timeout must be a number from 1 to 86400, got '0.5'");
}

TEST_F(SettingsTest, RepeatedKeyKeepsTheLastWithAWarning) {
    SshSettings s = load("ssh:\n  upload_files: [a]\n  upload_files: [b]\n");
    EXPECT_EQ(s.upload_files, (Strings{"b"}));
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_EQ(warnings_[0].line, 2);
    EXPECT_EQ(warnings_[0].message, "duplicate setting ssh.upload_files (the later one wins)");
    s = load("ssh:\n  remote_dir: a\nssh:\n  remote_dir: b\n");
    EXPECT_EQ(s.remote_dir, "b");
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_EQ(warnings_[0].line, 3);
    EXPECT_EQ(warnings_[0].message, "duplicate setting ssh (the later one wins)");
}

TEST_F(SettingsTest, ModelFileOverridesAndMergesUserFile) {
    SshSettings s = load(R"(model_paths: [~/top]
ssh:
  remote_dir: ~/user_ws
  create_venv: true
  environment: [A=user, B=user]
  upload_files: [u1.txt]
  startup_cmds: [user start]
  download_files: [ud/**]
  shutdown_cmds: [user stop]
  venv_packages: [pkg-user]
  model_paths: [~/user_models]
  connection: {hostname: user-host, port: 2200, username: alice}
  train_cmd: user cmd
)",
                         R"(ssh:
  remote_dir: ~/model_ws
  environment: {B: model, C: 3}
  upload_files: [m1.txt]
  startup_cmds: [model start]
  download_files: ["out.txt|./out.txt"]
  shutdown_cmds: [model stop]
  venv_packages: [pkg-model]
  model_paths: [~/model_models]
  connection:
    - {hostname: n0}
    - {hostname: n1, port: 2222}
  train_cmd:
)");
    EXPECT_TRUE(warnings_.empty());
    EXPECT_EQ(s.remote_dir, "~/model_ws");
    EXPECT_EQ(s.create_venv, true);
    EXPECT_EQ(s.environment, (Env{{"A", "user"}, {"B", "model"}, {"C", "3"}}));
    EXPECT_EQ(s.upload_files, (Strings{"u1.txt", "m1.txt"}));
    EXPECT_EQ(s.startup_cmds, (Strings{"user start", "model start"}));
    EXPECT_EQ(s.download_files, (Strings{"ud/**", "out.txt|./out.txt"}));
    EXPECT_EQ(s.shutdown_cmds, (Strings{"user stop", "model stop"}));
    EXPECT_EQ(s.venv_packages, (Strings{"pkg-model"}));  // replaced, not merged
    EXPECT_EQ(s.model_paths, (Strings{"~/top", "~/user_models", "~/model_models"}));
    ASSERT_EQ(s.connections.size(), 2u);
    EXPECT_EQ(s.connections[0].hostname, "n0");
    EXPECT_EQ(s.connections[0].port, 0);
    EXPECT_EQ(s.connections[0].username, "");
    EXPECT_EQ(s.connections[1].port, 2222);
    EXPECT_EQ(s.train_cmd, "user cmd");  // `train_cmd:` without a value is "not set"
}

// The rendezvous of several nodes: both keys are read; 0 and "" leave them to be found.
TEST_F(SettingsTest, NodesGiveTheRendezvous) {
    const SshSettings s = load("ssh:\n  nodes: {master_addr: 10.0.0.5, master_port: 29511}\n");
    EXPECT_EQ(s.master_addr, "10.0.0.5");
    EXPECT_EQ(s.master_port, 29511);
    const SshSettings d = load("ssh:\n  nodes: {master_addr: '', master_port: 0}\n");
    EXPECT_EQ(d.master_addr, "");
    EXPECT_EQ(d.master_port, 0);
    EXPECT_TRUE(warnings_.empty());
}

// transfer.min_rate and transfer.stall_seconds: the progress floor of data streams, 64 KiB/s
// over 30 s unless set; a model's value beats the user's; 0 turns the floor off.
TEST_F(SettingsTest, TransferFloorHasDefaultsAndBounds) {
    const SshSettings d = load("");
    EXPECT_EQ(d.transfer_min_rate, 65536);
    EXPECT_EQ(d.transfer_stall_seconds, 30);
    const SshSettings s = load("ssh:\n  transfer: {min_rate: 1000, stall_seconds: 5}\n",
                               "ssh:\n  transfer: {stall_seconds: 7}\n");
    EXPECT_EQ(s.transfer_min_rate, 1000);
    EXPECT_EQ(s.transfer_stall_seconds, 7);
    EXPECT_EQ(load("ssh:\n  transfer: {min_rate: 0}\n").transfer_min_rate, 0);
    EXPECT_TRUE(warnings_.empty());
    EXPECT_EQ(error_of("ssh:\n  transfer: {stall_seconds: 0}\n").first,
              "u:2:29: ssh.transfer.stall_seconds must be an integer from 1 to 86400, got '0'");
    EXPECT_EQ(error_of("ssh:\n  transfer: {min_rate: -1}\n").first,
              "u:2:24: ssh.transfer.min_rate must be an integer from 0 to 1073741824, got '-1'");
}

// watch.silent_minutes and stop_silent: the model's file wins over the user's, key by key;
// a negative value is exit 2 with its place.
TEST_F(SettingsTest, SilenceIsReadFromTheWatchMappingKeyByKey) {
    const SshSettings s = load("ssh:\n  watch: {silent_minutes: 30, stop_silent: true}\n",
                               "ssh:\n  watch: {silent_minutes: 0.5}\n");
    EXPECT_TRUE(warnings_.empty());
    EXPECT_EQ(s.silent_minutes, 0.5);
    EXPECT_TRUE(s.stop_silent);
    EXPECT_EQ(load("", "").silent_minutes, 0);
    EXPECT_NE(error_of("ssh:\n  watch: {silent_minutes: -1}\n")
                  .first.find("ssh.watch.silent_minutes must be"),
              std::string::npos);
}

// watch.stop_when: regexes and plateau rules, the user's first, then the model's; a regex
// that does not compile, a plateau without a group or a metric, a bad mode or patience is
// exit 2 with its place.
TEST_F(SettingsTest, StopRulesAreReadInOrderAndCheckedBeforeAnyRun) {
    const SshSettings s = load(
        "ssh:\n  watch:\n    stop_when: ['loss[=:] *nan', {metric: 'acc=([0-9.]+)', mode: max, "
        "patience: 3}]\n",
        "ssh:\n  watch: {stop_when: ['CUDA out of memory', {metric: 'l=(\\d+)'}]}\n");
    EXPECT_TRUE(warnings_.empty());
    ASSERT_EQ(s.stop_when.size(), 4u);
    EXPECT_EQ(s.stop_when[0].regex, "loss[=:] *nan");
    EXPECT_FALSE(s.stop_when[0].plateau);
    EXPECT_EQ(s.stop_when[1].regex, "acc=([0-9.]+)");
    EXPECT_TRUE(s.stop_when[1].plateau);
    EXPECT_TRUE(s.stop_when[1].maximize);
    EXPECT_EQ(s.stop_when[1].patience, 3);
    EXPECT_EQ(s.stop_when[2].regex, "CUDA out of memory");
    EXPECT_EQ(s.stop_when[3].regex, "l=(\\d+)");
    EXPECT_FALSE(s.stop_when[3].maximize);
    EXPECT_EQ(s.stop_when[3].patience, 5);

    auto [what, hint] = error_of("ssh:\n  watch:\n    stop_when: ['loss=(nan']\n");
    EXPECT_TRUE(
        has_text(what, "u:3:17: ssh.watch.stop_when[0] is no usable rule: not a valid regex"))
        << what;
    EXPECT_TRUE(has_text(hint, "Watching a run")) << hint;
    std::tie(what, hint) = error_of("ssh:\n  watch:\n    stop_when: [{metric: 'loss=[0-9]+'}]\n");
    EXPECT_TRUE(has_text(what,
                         "ssh.watch.stop_when[0] is no usable rule: a plateau rule's "
                         "metric regex needs a group"))
        << what;
    std::tie(what, hint) = error_of("ssh:\n  watch:\n    stop_when: [{mode: min}]\n");
    EXPECT_TRUE(has_text(what, "ssh.watch.stop_when[0] has no metric")) << what;
    std::tie(what, hint) =
        error_of("ssh:\n  watch:\n    stop_when: [{metric: 'a(1)', mode: lowest}]\n");
    EXPECT_TRUE(has_text(what, "ssh.watch.stop_when[0].mode must be one of min or max")) << what;
    std::tie(what, hint) =
        error_of("ssh:\n  watch:\n    stop_when: [{metric: 'a(1)', patience: 0}]\n");
    EXPECT_TRUE(has_text(what, "ssh.watch.stop_when[0].patience must be an integer from 1"))
        << what;
    std::tie(what, hint) = error_of("ssh:\n  watch: {stop_when: nan}\n");
    EXPECT_TRUE(has_text(what, "ssh.watch.stop_when must be a list of rules")) << what;
}

// watch.on_failure: {match, then} rules, the model's before the user's; the defaults after
// them unless turned off; a bad regex or action is an error with its place.
TEST_F(SettingsTest, FailureRulesAreReadModelFirstAndCheckedBeforeAnyRun) {
    SshSettings s =
        load("ssh:\n  watch:\n    on_failure: [{match: 'NCCL timeout', then: restart}]\n",
             "ssh:\n  watch:\n    on_failure:\n      - {match: 'Xid', then: exclude_host}\n"
             "      - {then: no_restart, match: 'OOM'}\n");
    ASSERT_EQ(s.on_failure.size(), 3u);
    EXPECT_EQ(s.on_failure[0].regex, "Xid");
    EXPECT_EQ(s.on_failure[0].then, FailureAction::exclude_host);
    EXPECT_EQ(s.on_failure[1].regex, "OOM");
    EXPECT_EQ(s.on_failure[1].then, FailureAction::no_restart);
    EXPECT_EQ(s.on_failure[2].regex, "NCCL timeout");
    EXPECT_EQ(s.on_failure[2].then, FailureAction::restart);
    EXPECT_TRUE(s.on_failure_defaults);
    EXPECT_FALSE(load("ssh:\n  watch: {on_failure_defaults: false}\n").on_failure_defaults);

    auto [what, hint] =
        error_of("ssh:\n  watch:\n    on_failure: [{match: 'a(', then: restart}]\n");
    EXPECT_TRUE(has_text(what, "u:3:26: ssh.watch.on_failure[0].match is not a valid regex"))
        << what;
    EXPECT_TRUE(has_text(hint, "When an attempt fails")) << hint;
    std::tie(what, hint) =
        error_of("ssh:\n  watch:\n    on_failure: [{match: 'a', then: reboot}]\n");
    EXPECT_TRUE(has_text(what,
                         "ssh.watch.on_failure[0].then must be one of no_restart, "
                         "exclude_host or restart"))
        << what;
    std::tie(what, hint) = error_of("ssh:\n  watch:\n    on_failure: [{match: 'a'}]\n");
    EXPECT_TRUE(has_text(what, "ssh.watch.on_failure[0] needs both `match` and `then`")) << what;
    std::tie(what, hint) = error_of("ssh:\n  watch:\n    on_failure: ['CUDA out of memory']\n");
    EXPECT_TRUE(has_text(what, "ssh.watch.on_failure[0] must be a list of rules")) << what;
}

// checkpoints: the mapping with keep_best inside, every value checked with its place; the
// model's mapping replaces the user's whole.
TEST_F(SettingsTest, CheckpointsAreReadWholeAndCheckedBeforeAnyRun) {
    EXPECT_FALSE(load("ssh:\n").checkpoints.on());
    SshSettings s =
        load("ssh:\n  checkpoints: {pattern: 'a/*.h5', keep_last: 5, marker: '{name}.ok'}\n",
             "ssh:\n  checkpoints:\n    pattern: 'checkpoints/*.pt'\n    keep_last: 2\n"
             "    keep_best: {metric: 'val_loss=([0-9.]+)', mode: max, n: 3, file: 'm.csv'}\n"
             "    settle_seconds: 4\n");
    EXPECT_EQ(s.checkpoints.pattern, "checkpoints/*.pt");
    EXPECT_EQ(s.checkpoints.keep_last, 2);
    EXPECT_EQ(s.checkpoints.best_metric, "val_loss=([0-9.]+)");
    EXPECT_TRUE(s.checkpoints.best_max);
    EXPECT_EQ(s.checkpoints.best_n, 3);
    EXPECT_EQ(s.checkpoints.best_file, "m.csv");
    EXPECT_EQ(s.checkpoints.settle_seconds, 4);
    EXPECT_EQ(s.checkpoints.marker, "");  // the user's mapping is replaced whole
    EXPECT_TRUE(s.checkpoints.deletes());
    s = load("ssh:\n  checkpoints: {pattern: 'x/*'}\n");
    EXPECT_TRUE(s.checkpoints.on());
    EXPECT_FALSE(s.checkpoints.deletes());
    EXPECT_EQ(s.checkpoints.settle_seconds, 10);

    auto [what, hint] = error_of("ssh:\n  checkpoints: {pattern: '../x/*'}\n");
    EXPECT_TRUE(has_text(what, "ssh.checkpoints.pattern must stay inside the log dir")) << what;
    std::tie(what, hint) = error_of("ssh:\n  checkpoints: {keep_last: 2}\n");
    EXPECT_TRUE(has_text(what, "ssh.checkpoints has no pattern")) << what;
    std::tie(what, hint) = error_of("ssh:\n  checkpoints: {pattern: 'x', marker: 'done'}\n");
    EXPECT_TRUE(has_text(what, "ssh.checkpoints.marker must name a file beside")) << what;
    std::tie(what, hint) =
        error_of("ssh:\n  checkpoints: {pattern: 'x', keep_best: {metric: 'loss=[0-9]+'}}\n");
    EXPECT_TRUE(has_text(what, "ssh.checkpoints.keep_best.metric is no usable metric")) << what;
    std::tie(what, hint) = error_of("ssh:\n  checkpoints: {pattern: 'x', keep_best: {n: 2}}\n");
    EXPECT_TRUE(has_text(what, "ssh.checkpoints.keep_best has no metric")) << what;
    std::tie(what, hint) = error_of("ssh:\n  checkpoints: 'x/*'\n");
    EXPECT_TRUE(has_text(what, "ssh.checkpoints must be a mapping")) << what;
}

// provider: the mapping, every value checked with its place; the model's mapping replaces the
// user's whole.
TEST_F(SettingsTest, ProviderIsReadWholeAndCheckedBeforeAnyRun) {
    EXPECT_FALSE(load("ssh:\n").provider.on());
    SshSettings s = load(
        "ssh:\n  provider: {name: runpod, offer: 'NVIDIA GeForce RTX 4090', image: 'i', "
        "teardown: keep}\n",
        "ssh:\n  provider:\n    name: vast\n    offer: 'gpu_name=RTX_4090 num_gpus=1'\n"
        "    max_price: 0.6\n    image: 'pytorch/pytorch'\n    disk_gb: 80\n");
    EXPECT_EQ(s.provider.name, "vast");
    EXPECT_EQ(s.provider.offer, "gpu_name=RTX_4090 num_gpus=1");
    ASSERT_TRUE(s.provider.max_price);
    EXPECT_DOUBLE_EQ(*s.provider.max_price, 0.6);
    EXPECT_EQ(s.provider.image, "pytorch/pytorch");
    EXPECT_EQ(s.provider.disk_gb, 80);
    EXPECT_EQ(s.provider.teardown, Teardown::destroy);  // the user's mapping is replaced whole

    auto [what, hint] = error_of("ssh:\n  provider: {name: aws, offer: x, image: i}\n");
    EXPECT_TRUE(has_text(what, "ssh.provider.name")) << what;
    std::tie(what, hint) = error_of("ssh:\n  provider: {name: vast, image: i}\n");
    EXPECT_TRUE(has_text(what, "ssh.provider has no offer")) << what;
    std::tie(what, hint) = error_of("ssh:\n  provider: {name: vast, offer: x}\n");
    EXPECT_TRUE(has_text(what, "ssh.provider has no image")) << what;
    std::tie(what, hint) =
        error_of("ssh:\n  provider: {name: vast, offer: x, image: i, max_price: -1}\n");
    EXPECT_TRUE(has_text(what, "ssh.provider.max_price")) << what;
    std::tie(what, hint) =
        error_of("ssh:\n  provider: {name: vast, offer: x, image: i, teardown: burn}\n");
    EXPECT_TRUE(has_text(what, "ssh.provider.teardown")) << what;
    std::tie(what, hint) =
        error_of("ssh:\n  provider: {name: vast, offer: '--url=https://x', image: i}\n");
    EXPECT_TRUE(has_text(what, "ssh.provider.offer starts with '-'")) << what;
    std::tie(what, hint) = error_of("ssh:\n  provider: vast\n");
    EXPECT_TRUE(has_text(what, "ssh.provider must be a mapping")) << what;
}

TEST_F(SettingsTest, PricePerHourIsAFiniteNumber) {
    EXPECT_DOUBLE_EQ(load("ssh:\n  price_per_hour: 0.45\n").price_per_hour, 0.45);
    EXPECT_DOUBLE_EQ(load("ssh:\n  price_per_hour: +2e-1\n").price_per_hour, 0.2);
    for (const char* bad : {".inf", "nan", "0x10", "1,5", "-1"})
        EXPECT_NE(error_of(std::string("ssh:\n  price_per_hour: ") + bad + "\n")
                      .first.find("ssh.price_per_hour must be a number from 0 to 1000000"),
                  std::string::npos)
            << bad;
}

// notify: targets with a format (json by default), the model's list replacing the user's;
// notify_cmd and notify_from beside them.
TEST_F(SettingsTest, NotifyTargetsAreReadAndTheModelsListReplacesTheUsers) {
    const SshSettings s = load(
        "ssh:\n  notify: [{url: 'https://ntfy.sh/user-topic', format: ntfy}]\n"
        "  notify_cmd: cat >> ~/events\n",
        "ssh:\n  notify:\n    - {url: 'https://hooks.slack.com/services/T0/B0/x', format: slack}\n"
        "    - url: http://127.0.0.1:8080/hook\n  notify_from: laptop\n");
    EXPECT_TRUE(warnings_.empty());
    ASSERT_EQ(s.notify.size(), 2u);
    EXPECT_EQ(s.notify[0].url, "https://hooks.slack.com/services/T0/B0/x");
    EXPECT_EQ(s.notify[0].format, NotifyFormat::slack);
    EXPECT_EQ(s.notify[1].url, "http://127.0.0.1:8080/hook");
    EXPECT_EQ(s.notify[1].format, NotifyFormat::json);
    EXPECT_EQ(s.notify_cmd, "cat >> ~/events");
    EXPECT_EQ(s.notify_from, NotifyFrom::laptop);

    const SshSettings none =
        load("ssh:\n  notify: [{url: 'https://ntfy.sh/a'}]\n", "ssh:\n  notify: []\n");
    EXPECT_TRUE(none.notify.empty());
    EXPECT_EQ(none.notify_from, NotifyFrom::host);
    EXPECT_EQ(load("").notify_cmd, "");
}

// A URL that is no http(s) webhook is exit 2 with its place; no message quotes more of a URL
// than its scheme and host, since the rest is a secret (a Slack webhook's token).
TEST_F(SettingsTest, ABadNotifyUrlIsRefusedWithItsPlaceAndWithoutItsSecret) {
    const std::string secret = "T0SECRET/B0SECRET/xoxSECRET";
    const struct {
        std::string yaml;
        std::string expected;
    } cases[] = {
        {"ssh:\n  notify: [{url: 'ftp://example.com/" + secret + "'}]\n",
         "u:2:18: ssh.notify[0].url ((a URL)) is no usable webhook URL: it does not start with "
         "http:// or https://"},
        {"ssh:\n  notify:\n    - {format: slack, url: 'https://hooks.slack.com/" + secret +
             " x'}\n",
         "u:3:28: ssh.notify[0].url (https://hooks.slack.com/…) is no usable webhook URL: it "
         "holds a blank"},
        {"ssh:\n  notify: [{url: \"https://user:" + secret + "@hooks.slack.com/a\\x01b\"}]\n",
         "u:2:18: ssh.notify[0].url ((a URL)) is no usable webhook URL: it holds a control "
         "character"},
        {"ssh:\n  notify: [{url: \"https://user:pw@hooks.slack.com/" + secret + "\\x01\"}]\n",
         "u:2:18: ssh.notify[0].url (https://hooks.slack.com/…) is no usable webhook URL: it "
         "holds a control character"},
        {"ssh:\n  notify: [{url: 'https:///" + secret + "'}]\n",
         "u:2:18: ssh.notify[0].url ((a URL)) is no usable webhook URL: it names no host"},
        {"ssh:\n  notify: 'https://hooks.slack.com/" + secret + "'\n",
         "u:2:11: ssh.notify must be a list of targets, each a mapping (url, format), got a "
         "string"},
        {"ssh:\n  notify: ['https://hooks.slack.com/" + secret + "']\n",
         "u:2:12: ssh.notify[0] must be a mapping (url, format), got a string"},
        {"ssh:\n  notify: [{url: [https://a/" + secret + "]}]\n",
         "u:2:18: ssh.notify[0].url must be an http:// or https:// URL, got a list"},
        {"ssh:\n  notify: [{format: ntfy}]\n", "u:2:12: ssh.notify[0] has no url"},
        {"ssh:\n  notify: [{url: 'https://a/b', format: teams}]\n",
         "u:2:41: ssh.notify[0].format must be one of json, ntfy or slack"},
        {"ssh:\n  notify_from: both\n", "u:2:16: ssh.notify_from must be one of host or laptop"},
    };
    for (const auto& c : cases) {
        const auto [what, hint] = error_of(c.yaml);
        EXPECT_TRUE(has_text(what, c.expected)) << what << "\n  for " << c.yaml;
        EXPECT_FALSE(has_text(what + hint, "SECRET")) << what << " (" << hint << ")";
    }
}

// masked_url: the scheme and host only (no user, password, path or query), whatever the URL.
TEST(NotifyUrl, MaskedShowsOnlySchemeAndHost) {
    EXPECT_EQ(masked_url("https://hooks.slack.com/services/T0/B0/xyz"),
              "https://hooks.slack.com/…");
    EXPECT_EQ(masked_url("http://user:pw@127.0.0.1:8080?token=x"), "http://127.0.0.1:8080/…");
    EXPECT_EQ(masked_url("HTTPS://[::1]:9/x#y"), "HTTPS://[::1]:9/…");
    EXPECT_EQ(masked_url("https://ho st/x"), "(a URL)");
    EXPECT_EQ(masked_url("https://user:pass/word@host/x"), "(a URL)");
    EXPECT_EQ(masked_url("https://host:/x"), "(a URL)");
    EXPECT_EQ(masked_url("xoxb-token"), "(a URL)");
    EXPECT_EQ(masked_url(""), "(a URL)");
    EXPECT_EQ(notify_url_problem("https://ntfy.sh/a?b=c&d=%20"), std::nullopt);
    EXPECT_EQ(notify_url_problem("https://a/\"b"), "it holds a `\"` or `\\` (percent-encode it)");
    EXPECT_EQ(notify_url_problem("https://a/\xc3\xa9"),
              "it holds a non-ASCII character (percent-encode it)");
    EXPECT_EQ(notify_url_problem("https://a/" + std::string(2048, 'x')),
              "it is longer than 2048 bytes");
}

// A sidecar with a notify URL holds a secret: a wildcard upload leaves it out.
TEST_F(SettingsTest, ASidecarWithANotifyUrlHoldsASecret) {
    EXPECT_TRUE(settings_file_holds_secret(
        write("a.ssh.yaml", "ssh:\n  notify: [{url: 'https://ntfy.sh/x'}]\n")));
    EXPECT_FALSE(settings_file_holds_secret(write("b.ssh.yaml", "ssh:\n  notify: []\n")));
    EXPECT_FALSE(settings_file_holds_secret(write("c.ssh.yaml", "ssh:\n  notify_cmd: cat\n")));
}

TEST_F(SettingsTest, TopLevelModelPathsComesBeforeSshModelPaths) {
    SshSettings s = load("ssh:\n  model_paths: [b]\nmodel_paths: [a]\n");
    EXPECT_EQ(s.model_paths, (Strings{"a", "b"}));
    EXPECT_TRUE(warnings_.empty());
    EXPECT_EQ(load("model_paths: [a]\n").model_paths, (Strings{"a"}));
    EXPECT_EQ(load("model_paths:\n").model_paths, (Strings{}));
}

TEST_F(SettingsTest, EnvironmentListAndMappingForms) {
    SshSettings list = load("ssh:\n  environment: [A=1, \"B=two words\", C=x=y, D=, A=3]\n");
    EXPECT_EQ(list.environment, (Env{{"A", "3"}, {"B", "two words"}, {"C", "x=y"}, {"D", ""}}));
    SshSettings map = load(
        "ssh:\n  environment:\n    N: 42\n    F: 1.5\n    T: true\n    E:\n    Q: \"a b\"\n"
        "    _x1: 'y'\n");
    EXPECT_EQ(
        map.environment,
        (Env{{"N", "42"}, {"F", "1.5"}, {"T", "true"}, {"E", ""}, {"Q", "a b"}, {"_x1", "y"}}));
}

TEST_F(SettingsTest, HostKeyCheckingSpellings) {
    const std::vector<std::pair<std::string, HostKeyChecking>> cases = {
        {"yes", HostKeyChecking::yes},
        {"\"yes\"", HostKeyChecking::yes},
        {"true", HostKeyChecking::yes},
        {"no", HostKeyChecking::no},
        {"false", HostKeyChecking::no},
        {"No", HostKeyChecking::no},
        {"accept-new", HostKeyChecking::accept_new},
    };
    for (const auto& [text, value] : cases) {
        SCOPED_TRACE(text);
        EXPECT_EQ(load("ssh:\n  host_key_checking: " + text + "\n").host_key_checking, value);
    }
}

TEST_F(SettingsTest, NumberBounds) {
    EXPECT_EQ(load("ssh:\n  connection: {port: 65535}\n").connections.at(0).port, 65535);
    EXPECT_EQ(load("ssh:\n  connection: {port: 1}\n").connections.at(0).port, 1);
    EXPECT_EQ(load("ssh:\n  sync_every: 0\n  price_per_hour: 0\n").sync_every, 0);
    EXPECT_EQ(load("ssh:\n  connection: {timeout: 2.5e0}\n").connections.at(0).timeout_s, 3);
    EXPECT_EQ(error_of("ssh:\n  nodes: {master_port: 65536}\n").first,
              "u:2:24: ssh.nodes.master_port must be an integer from 0 to 65535, got '65536'");
    EXPECT_EQ(error_of("ssh:\n  price_per_hour: -0.1\n").first,
              "u:2:19: ssh.price_per_hour must be a number from 0 to 1000000, got '-0.1'");
}

TEST_F(SettingsTest, TransferEntriesAreValidatedWithTheirLocation) {
    auto [what, hint] = error_of("ssh:\n  upload_files:\n    - ok/*.txt\n    - /etc/passwd\n");
    EXPECT_EQ(what.rfind("u:4:7: upload_files entry '/etc/passwd' is absolute", 0), 0u) << what;
    EXPECT_NE(hint.find("from|to"), std::string::npos);
    what = error_of("ssh:\n  download_files: [\"a*|b\"]\n").first;
    EXPECT_EQ(what.rfind("u:2:20: download_files entry 'a*|b' uses the wildcard", 0), 0u) << what;
    EXPECT_NO_THROW(load("ssh:\n  upload_files: [\"/abs/x|x\", \"~/y|../y\", a/**/b.csv]\n"));
}

TEST(TransferSpec, PathRules) {
    TransferSpec glob = parse_transfer_spec("data/**/*.csv", TransferDirection::upload);
    EXPECT_TRUE(glob.is_glob);
    EXPECT_EQ(glob.from, "data/**/*.csv");
    EXPECT_EQ(glob.to, "data/**/*.csv");
    TransferSpec pair = parse_transfer_spec("~/patch.txt | ./patch.txt", TransferDirection::upload);
    EXPECT_FALSE(pair.is_glob);
    EXPECT_EQ(pair.from, "~/patch.txt");
    EXPECT_EQ(pair.to, "./patch.txt");
    TransferSpec abs = parse_transfer_spec("/abs/a|../b", TransferDirection::download);
    EXPECT_EQ(abs.from, "/abs/a");
    EXPECT_EQ(abs.to, "../b");
    EXPECT_TRUE(parse_transfer_spec("a..b/c", TransferDirection::upload).is_glob);
    // As in MLTK: an upload glob may reach above the spec dir; `?` and `[` in a pair are
    // plain characters.
    EXPECT_EQ(parse_transfer_spec("../common/*.py", TransferDirection::upload).from,
              "../common/*.py");
    TransferSpec literal = parse_transfer_spec("a[1]?.txt|b[2].txt", TransferDirection::upload);
    EXPECT_FALSE(literal.is_glob);
    EXPECT_EQ(literal.from, "a[1]?.txt");
    EXPECT_EQ(literal.to, "b[2].txt");

    const std::vector<std::pair<std::string, std::string>> bad = {
        {"", "empty entry"},       {"/abs/*.csv", "is absolute"},
        {"~/x", "is absolute"},    {"a|b|c", "more than one '|'"},
        {"|b", "empty side"},      {"a| ", "empty side"},
        {"*.txt|out", "wildcard"}, {"a|b*", "wildcard"},
    };
    for (const auto& [entry, problem] : bad) {
        for (auto direction : {TransferDirection::upload, TransferDirection::download}) {
            SCOPED_TRACE(entry);
            try {
                parse_transfer_spec(entry, direction);
                ADD_FAILURE() << "accepted";
            } catch (const Error& e) {
                EXPECT_EQ(e.kind(), ErrorKind::config);
                std::string what = e.what();
                EXPECT_NE(what.find(problem), std::string::npos) << what;
                EXPECT_NE(what.find(direction == TransferDirection::upload ? "upload_files"
                                                                           : "download_files"),
                          std::string::npos);
            }
        }
    }
}

TEST(SettingsPaths, DownloadGlobsStayInsideTheRemoteDir) {
    for (const std::string entry : {"../x", "a/../../x", "a/.."}) {
        try {
            parse_transfer_spec(entry, TransferDirection::download);
            ADD_FAILURE() << entry << " accepted";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("contains '..'"), std::string::npos) << e.what();
        }
    }
}

TEST(SettingsPaths, UserAndModelLocations) {
    const char* old = std::getenv("MLTK_USER_SETTINGS_PATH");
    std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
    // A file the variable names must exist: a typo must not train with other settings.
    const std::string named = ::testing::TempDir() + "mlt_u_settings.yaml";
    write_file_atomic(named, "ssh: {}\n", 0600);
    setenv("MLTK_USER_SETTINGS_PATH", named.c_str(), 1);
    EXPECT_EQ(default_user_settings_path(), named);
    std::remove(named.c_str());
    try {
        default_user_settings_path();
        ADD_FAILURE() << "a missing " << named << " was taken";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), exit_code::kUsage);
        EXPECT_NE(std::string(e.what()).find("MLTK_USER_SETTINGS_PATH names " + named +
                                             ", which does not exist"),
                  std::string::npos)
            << e.what();
    }
    unsetenv("MLTK_USER_SETTINGS_PATH");
    EXPECT_EQ(default_user_settings_path(), home_dir() + "/.mltk/user_settings.yaml");
    if (saved) setenv("MLTK_USER_SETTINGS_PATH", saved->c_str(), 1);

    EXPECT_EQ(model_settings_path_for("models/my_model.py"), "models/my_model.ssh.yaml");
    EXPECT_EQ(model_settings_path_for("my_model.py"), "my_model.ssh.yaml");
    EXPECT_EQ(model_settings_path_for("/a.b/m.v2.py"), "/a.b/m.v2.ssh.yaml");
}

// The first line where two texts differ, for a readable failure message.
std::string first_difference(const std::string& actual, const std::string& expected) {
    std::istringstream a(actual);
    std::istringstream b(expected);
    std::string line_a;
    std::string line_b;
    for (int n = 1;; ++n) {
        bool more_a = static_cast<bool>(std::getline(a, line_a));
        bool more_b = static_cast<bool>(std::getline(b, line_b));
        if (!more_a && !more_b) return "(none; line endings?)";
        if (!more_a || !more_b || line_a != line_b)
            return "line " + std::to_string(n) +
                   ":\n  docs/settings.md: " + (more_a ? line_a : "<end>") +
                   "\n  generated:        " + (more_b ? line_b : "<end>");
    }
}

TEST(SettingsDoc, DocsFileMatchesTheDeclarationTable) {
    const std::string path = std::string(MLT_SOURCE_DIR) + "/docs/settings.md";
    const std::string expected = settings_reference_markdown();
    if (const char* update = std::getenv("MLT_UPDATE_DOCS"); update && std::string(update) == "1")
        write_file_atomic(path, expected, 0644);
    std::string actual;
    if (std::filesystem::exists(path)) actual = read_file(path);
    EXPECT_TRUE(actual == expected)
        << "docs/settings.md is out of date with settings_reference_markdown(); regenerate it "
           "with\n  MLT_UPDATE_DOCS=1 <build dir>/tests/mlt_unit_tests "
           "--gtest_filter='SettingsDoc.*'\nfirst difference at "
        << first_difference(actual, expected);
}

TEST_F(SettingsTest, DocsExampleLoadsCleanly) {
    const std::string doc = settings_reference_markdown();
    size_t begin = doc.find("```yaml\n");
    ASSERT_NE(begin, std::string::npos);
    begin += 8;
    size_t end = doc.find("```", begin);
    SshSettings s = load(doc.substr(begin, end - begin));
    EXPECT_TRUE(warnings_.empty());
    ASSERT_EQ(s.connections.size(), 1u);
    EXPECT_EQ(s.connections[0].hostname, "gpu.example.com");
    EXPECT_EQ(s.environment, (Env{{"CUDA_VISIBLE_DEVICES", "0"}, {"RUN_NAME", "first try"}}));
    EXPECT_EQ(s.upload_files, (Strings{"dataset/*.csv", "~/patch.txt|./patch.txt"}));
    EXPECT_EQ(s.create_venv, true);
}

// MLTK's own test settings: a bare name is empty, matching outer quotes go, the rest stays.
TEST_F(SettingsTest, EnvironmentListIsReadAsMltkReadsIt) {
    SshSettings s = load(R"(ssh:
  environment: ['TEST="This is a test"', FOO, BAR=this is a string without quotes,
                "Q='single'", 'MIX="a''', 'IN=a "b" c', 'E=""', "X==y"]
)");
    EXPECT_TRUE(warnings_.empty());
    EXPECT_EQ(s.environment, (Env{{"TEST", "This is a test"},
                                  {"FOO", ""},
                                  {"BAR", "this is a string without quotes"},
                                  {"Q", "single"},
                                  {"MIX", "\"a'"},
                                  {"IN", "a \"b\" c"},
                                  {"E", ""},
                                  {"X", "=y"}}));
}

// YAML merge keys, as MLTK's PyYAML reads them: the keys written beside `<<` win, of a list
// the earlier mapping wins, and neither is a "duplicate".
TEST_F(SettingsTest, MergeKeysWorkInSettingsAndSidecars) {
    SshSettings s = load(R"(base: &base
  remote_dir: ~/base_ws
  train_cmd: mltk train {model}
conn: &conn {hostname: gpu, port: 2222}
ssh:
  <<: *base
  train_cmd: sh {spec}
  connection: {<<: *conn, port: 2200}
)");
    EXPECT_TRUE(warnings_.empty()) << warnings_.front().message;
    EXPECT_EQ(s.remote_dir, "~/base_ws");
    EXPECT_EQ(s.train_cmd, "sh {spec}");
    ASSERT_EQ(s.connections.size(), 1u);
    EXPECT_EQ(s.connections[0].hostname, "gpu");
    EXPECT_EQ(s.connections[0].port, 2200);

    s = load("ssh: {remote_dir: user}\n",
             "a: &a {remote_dir: from_a}\nb: &b {remote_dir: from_b, train_cmd: b}\n"
             "ssh:\n  <<: [*a, *b]\n");
    EXPECT_TRUE(warnings_.empty()) << warnings_.front().message;
    EXPECT_EQ(s.remote_dir, "from_a");
    EXPECT_EQ(s.train_cmd, "b");

    auto [what, hint] = error_of("ssh:\n  <<: 5\n");
    EXPECT_EQ(what, "u:2:7: ssh: the merge key << needs a mapping or a list of mappings, got '5'");
    auto [loop, loop_hint] = error_of("a: &a\n  <<: *a\nssh:\n  <<: *a\n");
    EXPECT_NE(loop.find("nested more than 64 levels"), std::string::npos) << loop;
}

TEST_F(SettingsTest, NulInAValueIsAnErrorWithItsPlace) {
    auto [what, hint] = error_of("ssh:\n  remote_dir: ok\n  train_cmd: \"sh\\0 {spec}\"\n");
    EXPECT_EQ(what, "u:3:14: a NUL character (\\0) in a value");
    auto [in_env, env_hint] = error_of("ssh:\n  environment: {A: \"x\\0\"}\n");
    EXPECT_EQ(in_env.rfind("u:2:20: a NUL character", 0), 0u) << in_env;
    auto [in_key, key_hint] = error_of("ssh:\n  \"remote\\0dir\": x\n");
    EXPECT_EQ(in_key.rfind("u:2:3: a NUL character", 0), 0u) << in_key;
}

TEST_F(SettingsTest, ASecondDocumentIsAWarning) {
    SshSettings s = load("ssh:\n  remote_dir: first\n---\nssh:\n  remote_dir: second\n");
    EXPECT_EQ(s.remote_dir, "first");
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_EQ(warnings_[0].file, dir_ + "/user.yaml");
    EXPECT_EQ(warnings_[0].line, 3);
    EXPECT_EQ(warnings_[0].message,
              "a second YAML document (after ---) is ignored; only the first is read");
}

// `ssh:` with its keys at column 0 (or no `ssh:` at all) yields no settings: said, with where.
TEST_F(SettingsTest, AnSshBlockWithoutIndentationIsAWarning) {
    SshSettings s = load("model_paths: [a]\nssh:\nremote_dir: here\ntrain_cmd: go\nother: 1\n");
    EXPECT_NE(s.remote_dir, "here");
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_EQ(warnings_[0].line, 3);
    EXPECT_EQ(warnings_[0].message,
              "no ssh settings here, but top-level remote_dir, train_cmd (ignored there): indent "
              "the settings below `ssh:`");
    load("hostname: gpu\n");
    EXPECT_EQ(warnings_.size(), 1u);
    // MLTK's own top-level keys are no such slip.
    load("model_paths: [a]\nother: 1\n");
    EXPECT_TRUE(warnings_.empty());
}

TEST_F(SettingsTest, DocumentMarkersAroundOneDocumentAreNoSecond) {
    SshSettings s = load("# settings\n---\nssh:\n  remote_dir: only\n...\n# the end\n");
    EXPECT_EQ(s.remote_dir, "only");
    EXPECT_TRUE(warnings_.empty());
    load("ssh:\n  remote_dir: a\n...\nssh: {}\n");
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_EQ(warnings_[0].line, 4);
}

// A fuzzer found a file on which yaml-cpp's LoadAll never returned (the second document was
// looked for by parsing the rest): the file must load or be refused, in bounded time.
TEST_F(SettingsTest, AFileWhoseRestNeverParsesIsReadOrRefused) {
    const std::string text = mlt::read_file(
        std::string(MLT_SOURCE_DIR) + "/tests/fuzz/corpus/settings_yaml/loadall-hang-826d1d36");
    try {
        load(text);
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.code(), mlt::exit_code::kUsage) << e.what();
    }
}

// MLT_* are the job wrapper's: a setting that names one is ignored with a warning naming the
// key and the file (environment: {MLT_LOG_DIR: /etc/ssh} once made mlt pull /etc/ssh).
TEST_F(SettingsTest, EnvironmentMayNotSetMltsOwnVariables) {
    SshSettings s = load("ssh:\n  environment: {MLT_LOG_DIR: /etc/ssh, A: 1, MLT_MODEL: x}\n",
                         "ssh:\n  environment: [B=2, MLT_ARCHIVE=/etc/shadow]\n");
    EXPECT_EQ(s.environment, (Env{{"A", "1"}, {"B", "2"}}));
    ASSERT_EQ(warnings_.size(), 3u);
    EXPECT_EQ(warnings_[0].file, dir_ + "/user.yaml");
    EXPECT_EQ(warnings_[0].line, 2);
    EXPECT_EQ(warnings_[0].column, 17);
    EXPECT_EQ(warnings_[0].message,
              "ssh.environment sets MLT_LOG_DIR, one of mlt's own MLT_ variables (ignored; mlt "
              "sets it)");
    EXPECT_NE(warnings_[1].message.find("MLT_MODEL"), std::string::npos);
    EXPECT_EQ(warnings_[2].file, dir_ + "/model.ssh.yaml");
    EXPECT_NE(warnings_[2].message.find("sets MLT_ARCHIVE"), std::string::npos);
    s = load("ssh:\n  environment: {A: 1}\n");
    EXPECT_EQ(s.environment, (Env{{"A", "1"}}));
}

}  // namespace
}  // namespace mlt
