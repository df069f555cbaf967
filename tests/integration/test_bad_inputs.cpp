// A catalogue of bad inputs, each run through the real `mlt` against a real sshd: settings
// files, sidecars, model specs, host specs, ports, keys, model names, paths, flags, numbers
// and absurd lengths. Each must give one clear error line with the documented exit code
// (docs/usage.md, "Exit status") and change nothing on the remote.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/openssh.h"
#include "harness/ssh_test.h"

namespace mlt_test {
namespace {

constexpr int kExitUsage = 2;
constexpr int kExitHostKey = 4;
constexpr int kExitConnection = 255;

// The longest error line accepted: messages carry a path or two and a hint, and quote a value
// only up to a bound, never a whole absurd one (the longest inputs below are 5000, 100000 and
// 1048576 bytes).
constexpr std::size_t kMaxErrorLine = 1200;

// The user settings of a working setup: the test server, an absolute remote dir and log dir,
// and a train_cmd that needs nothing (should a case get through after all, no venv, no pip).
// @NAME@ are filled in per test (see BadInputTest::fill); {model} is mlt's own placeholder.
const std::string kSettingsHead =
    "ssh:\n"
    "  remote_dir: \"@REMOTE@\"\n"
    "  remote_log_dir: \"@LOGS@/{model}\"\n"
    "  train_cmd: \"sh {spec}\"\n";
const std::string kConnection =
    "  connection: {hostname: 127.0.0.1, port: @PORT@, username: @USER@, "
    "key_filename: \"@KEY@\"}\n";
const std::string kSettings = kSettingsHead + kConnection;
// A connection whose port is `port` as written in YAML.
std::string connection_with_port(const std::string& port) {
    return kSettingsHead + "  connection: {hostname: 127.0.0.1, port: " + port +
           ", username: @USER@, key_filename: \"@KEY@\"}\n";
}
// Marks "write no user settings file".
const std::string kNoFile = "<none>";
// The model spec: a plain model, no SshMixin settings.
const std::string kSpec = "# a model spec\necho training\n";

// Resolves the @NAME@ placeholders of a text for the running test.
using Fill = std::function<std::string(const std::string&)>;
// Writes files a case needs besides settings, sidecar and spec (keys, known_hosts).
using Prepare = std::function<void(const Fill&)>;

// One bad input: the files around it, the command line, and what mlt must answer.
struct BadInput {
    std::string name;
    std::vector<std::string> args;  // after `mlt`; run in the project dir
    int exit_code = kExitUsage;
    std::vector<std::string> expect;  // each must be in the error line
    std::string settings = kSettings;
    std::string sidecar;  // <project>/m.ssh.yaml when not empty
    std::string spec = kSpec;
    std::map<std::string, std::string> env;  // added to mlt's environment
    Prepare prepare;
    bool connects = false;  // auth / host key failures: sshd must be reached

    BadInput(std::string n, std::vector<std::string> a, int code, std::vector<std::string> e)
        : name(std::move(n)), args(std::move(a)), exit_code(code), expect(std::move(e)) {}
    BadInput with_settings(std::string s) const {
        BadInput c = *this;
        c.settings = std::move(s);
        return c;
    }
    BadInput with_sidecar(std::string s) const {
        BadInput c = *this;
        c.sidecar = std::move(s);
        return c;
    }
    BadInput with_spec(std::string s) const {
        BadInput c = *this;
        c.spec = std::move(s);
        return c;
    }
    BadInput with_env(const std::string& var, std::string value) const {
        BadInput c = *this;
        c.env[var] = std::move(value);
        return c;
    }
    BadInput with_prepare(Prepare p) const {
        BadInput c = *this;
        c.prepare = std::move(p);
        return c;
    }
    BadInput connecting() const {
        BadInput c = *this;
        c.connects = true;
        return c;
    }
};

void PrintTo(const BadInput& c, std::ostream* os) {
    *os << c.name;
}

// Writes `content` to the file `name` (after filling) with `mode`.
Prepare file(const std::string& name, const std::string& content, mode_t mode = 0600) {
    return [=](const Fill& fill) { write_file(fill(name), fill(content), mode); };
}

// A copy of the authorized client key (or its .pub) at `name` with `mode`.
Prepare key_copy(const std::string& name, mode_t mode, bool pub = false) {
    return [=](const Fill& fill) {
        write_file(fill(name), read_file(fill(pub ? "@KEY@.pub" : "@KEY@")), mode);
    };
}

std::string repeat(const std::string& s, std::size_t n) {
    std::string out;
    out.reserve(s.size() * n);
    for (std::size_t i = 0; i < n; ++i) out += s;
    return out;
}

const std::vector<std::string> kStatus = {"ssh", "status"};
const std::vector<std::string> kTrain = {"ssh", "train", "m"};
std::vector<std::string> with_host(const std::string& host,
                                   std::vector<std::string> tail = {"status"}) {
    std::vector<std::string> args = {"ssh", "-h", host};
    args.insert(args.end(), tail.begin(), tail.end());
    return args;
}
std::vector<std::string> ssh_then(std::vector<std::string> options,
                                  std::vector<std::string> tail = {"status"}) {
    std::vector<std::string> args = {"ssh"};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), tail.begin(), tail.end());
    return args;
}
std::vector<std::string> train_with(std::vector<std::string> tail) {
    std::vector<std::string> args = kTrain;
    args.insert(args.end(), tail.begin(), tail.end());
    return args;
}

// The user settings file: its syntax, shape, size and path.
std::vector<BadInput> catalogue_settings_file() {
    const int u = kExitUsage;
    std::vector<BadInput> c;
    c.push_back(BadInput("SettingsYamlSyntax", kStatus, u, {"@SETTINGS@:", "malformed YAML"})
                    .with_settings(kSettings + "  upload_files: [unclosed\n"));
    c.push_back(BadInput("SettingsTopLevelList", kStatus, u,
                         {"@SETTINGS@:1:1: a settings file must be a mapping"})
                    .with_settings("- ssh\n- remote_dir\n"));
    c.push_back(BadInput("SettingsSshIsList", kStatus, u, {"@SETTINGS@:2:3: ssh must be a mapping"})
                    .with_settings("ssh:\n  - remote_dir: x\n"));
    c.push_back(BadInput("SettingsSshIsScalar", kStatus, u, {"ssh must be a mapping", "got '5'"})
                    .with_settings("ssh: 5\n"));
    c.push_back(BadInput("SettingsBinaryGarbage", kStatus, u, {"@SETTINGS@:", "malformed YAML"})
                    .with_settings("ssh:\n  remote_dir: \"\\\x01\x02\xff\xfe\"\n"));
    c.push_back(BadInput("SettingsNestedTooDeep", kStatus, u, {"@SETTINGS@:", "malformed YAML"})
                    .with_settings("ssh:\n  environment: " + repeat("[", 100000) + "\n"));
    c.push_back(
        BadInput("SettingsOneMegabyteValue", kStatus, u,
                 {"@SETTINGS@:6:16: ssh.create_venv must be true or false"})
            .with_settings(kSettings + "  create_venv: " + std::string(1 << 20, 'y') + "\n"));
    c.push_back(BadInput("SettingsOneMegabyteOfLinesThenError", kStatus, u,
                         {"@SETTINGS@:65542:", "ssh.reconnect_timeout"})
                    .with_settings(kSettings + repeat("  # padding padding\n", 65536) +
                                   "  reconnect_timeout: soon\n"));
    c.push_back(BadInput("SettingsPathIsDirectory", kStatus, u, {"is not a regular file"})
                    .with_settings(kNoFile)
                    .with_env("MLTK_USER_SETTINGS_PATH", "@HOME@/.ssh"));
    // The file MLTK_USER_SETTINGS_PATH names must exist (a typo there would silently drop
    // every setting).
    c.push_back(BadInput("SettingsEnvNamesMissingFile", with_host("@HOST@"), u,
                         {"@HOME@/no_such_settings.yaml", "MLTK_USER_SETTINGS_PATH"})
                    .with_settings(kNoFile)
                    .with_env("MLTK_USER_SETTINGS_PATH", "@HOME@/no_such_settings.yaml"));
    return c;
}

// Numbers and paths in the settings file.
std::vector<BadInput> catalogue_settings_values() {
    const int u = kExitUsage;
    std::vector<BadInput> c;
    for (const auto& [name, port] :
         std::vector<std::pair<std::string, std::string>>{{"Zero", "0"},
                                                          {"TooBig", "65536"},
                                                          {"Negative", "-1"},
                                                          {"Hex", "0x8fb"},
                                                          {"LeadingSpace", "\" 22\""},
                                                          {"Exponent", "1e3"},
                                                          {"TrailingLetters", "22abc"},
                                                          {"Fraction", "22.5"}}) {
        const std::string shown = port[0] == '"' ? port.substr(1, port.size() - 2) : port;
        c.push_back(BadInput("SettingsPort" + name, kStatus, u,
                             {"ssh.connection.port must be an integer from 1 to 65535",
                              "got '" + shown + "'"})
                        .with_settings(connection_with_port(port)));
    }
    c.push_back(BadInput("SettingsReconnectTimeoutNegative", kStatus, u,
                         {"@SETTINGS@:6:22: ssh.reconnect_timeout", "got '-1'"})
                    .with_settings(kSettings + "  reconnect_timeout: -1\n"));
    c.push_back(
        BadInput("SettingsReconnectTimeoutHex", kStatus, u, {"ssh.reconnect_timeout", "got '0x10'"})
            .with_settings(kSettings + "  reconnect_timeout: 0x10\n"));
    c.push_back(BadInput("SettingsTimeoutZero", kStatus, u, {"ssh.connection.timeout", "got '0'"})
                    .with_settings(kSettingsHead +
                                   "  connection: {hostname: 127.0.0.1, port: @PORT@, "
                                   "username: @USER@, key_filename: \"@KEY@\", timeout: 0}\n"));
    c.push_back(BadInput("SettingsHostKeyCheckingMaybe", kStatus, u,
                         {"ssh.host_key_checking must be one of yes, accept-new, no"})
                    .with_settings(kSettings + "  host_key_checking: maybe\n"));
    c.push_back(BadInput("SettingsCompressionUnknown", kStatus, u, {"ssh.compression", "'lz4'"})
                    .with_settings(kSettings + "  compression: lz4\n"));
    c.push_back(BadInput("SettingsEnvironmentBadName", kStatus, u,
                         {"ssh.environment entry '1A=b'", "not a valid variable name"})
                    .with_settings(kSettings + "  environment: ['1A=b']\n"));

    c.push_back(BadInput("SettingsNulInValue", kStatus, u,
                         {"@SETTINGS@:6:20: a NUL character (\\0) in a value"})
                    .with_settings(kSettings + "  environment: {A: \"x\\0y\"}\n"));
    // Several connections are several nodes, which train does not do yet: the message says so.
    c.push_back(
        BadInput("SettingsConnectionList", {"ssh", "download", "m"}, u,
                 {"ssh.connection lists 2 connections; download works on one node",
                  "pick the host with -h"})
            .with_settings(kSettingsHead +
                           "  connection:\n"
                           "    - {hostname: 127.0.0.1, port: @PORT@, username: @USER@}\n"
                           "    - {hostname: 127.0.0.2, port: @PORT@, username: @USER@}\n"));

    // --- paths in the settings ---
    c.push_back(BadInput("SettingsUploadAbsolute", kTrain, u,
                         {"upload_files entry '/etc/passwd' is absolute"})
                    .with_settings(kSettings + "  upload_files: [/etc/passwd]\n"));
    c.push_back(BadInput("SettingsDownloadPairWithStar", kTrain, u,
                         {"download_files entry 'a*|b' uses the wildcard *"})
                    .with_settings(kSettings + "  download_files: ['a*|b']\n"));
    c.push_back(BadInput("SettingsCleanRemoteLogDirRoot", train_with({"--clean"}), u,
                         {"remote_log_dir '/' is / on the remote"})
                    .with_settings(kSettings + "  remote_log_dir: /\n"));
    return c;
}

// The sidecar <stem>.ssh.yaml and the SshMixin literals of the spec.
std::vector<BadInput> catalogue_sidecar_and_spec() {
    const int u = kExitUsage;
    std::vector<BadInput> c;
    c.push_back(
        BadInput("SidecarYamlSyntax", kTrain, u, {"@PROJECT@/m.ssh.yaml:2:", "malformed YAML"})
            .with_sidecar("ssh:\n  upload_files: {a: [}\n"));
    c.push_back(BadInput("SidecarUploadFilesNumber", kTrain, u,
                         {"@PROJECT@/m.ssh.yaml:2:17: ssh.upload_files must be a list of strings"})
                    .with_sidecar("ssh:\n  upload_files: 5\n"));
    c.push_back(
        BadInput("SidecarSshIsList", kTrain, u, {"@PROJECT@/m.ssh.yaml:2:3: ssh must be a mapping"})
            .with_sidecar("ssh:\n  - a\n"));
    c.push_back(
        BadInput("SidecarNulInValue", kTrain, u, {"@PROJECT@/m.ssh.yaml:2:14: a NUL character"})
            .with_sidecar("ssh:\n  train_cmd: \"sh {spec}\\0; id\"\n"));
    c.push_back(
        BadInput("SidecarCleanRemoteLogDirHome", train_with({"--clean"}), u, {"remote_log_dir '~'"})
            .with_sidecar("ssh:\n  remote_log_dir: '~'\n"));

    // --- SshMixin literals of the spec ---
    c.push_back(BadInput("SpecUploadFilesNumber", kTrain, u,
                         {"@PROJECT@/m.py:2:", "ssh.upload_files must be a list of strings"})
                    .with_spec("import x\nmy_model.ssh_upload_files = 5\n"));
    c.push_back(BadInput("SpecUploadFilesAbsolute", kTrain, u,
                         {"@PROJECT@/m.py:2:", "upload_files entry '/etc/shadow' is absolute"})
                    .with_spec("import x\nmy_model.ssh_upload_files = ['/etc/shadow']\n"));
    c.push_back(BadInput("SpecEnvironmentBadName", kTrain, u,
                         {"@PROJECT@/m.py:", "'A B' is not a valid variable name"})
                    .with_spec("my_model.ssh_environment = {'A B': 'x'}\n"));
    return c;
}

// Host specs, ports and numbers on the command line.
std::vector<BadInput> catalogue_hosts_and_numbers() {
    const int u = kExitUsage;
    std::vector<BadInput> c;
    for (const auto& [name, host, what] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"UserOnly", "user@", "empty host name"},
             {"HostOnlyAfterAt", "@host", "empty user name"},
             {"EmptyPort", "host:", "empty port after ':'"},
             {"TwoPorts", "host:22:23", "more than one ':'"},
             {"OpenBracket", "[::1", "'[' without a closing ']'"},
             {"TextAfterBracket", "[::1]x", "unexpected text after ']'"},
             {"UserLikeOption", "-oProxyCommand=id@gpu", "user name may not start with '-'"},
             {"TrailingSlash", "host/", "nothing after '/'"},
             {"Empty", "", "empty host"},
             {"Blank", "a b", "contains whitespace or a control character"},
             {"Newline", "gpu\nevil", "contains whitespace or a control character"},
             {"OptionLike", "-oProxyCommand=id", "may not start with '-'"},
             {"PortHex", "127.0.0.1:0x8fb", "port '0x8fb'"},
             {"PortTooBig", "127.0.0.1:65536", "port 65536 is not in 1..65535"},
             {"Semicolon", "gpu;id", "';' is not allowed in host names"},
             {"CommandSubstitution", "$(id)", "'$' is not allowed in host names"},
             {"Underscore", "no_such_alias", "'_' is not allowed in host names"},
             {"HundredKilobytes", std::string(100000, 'h'), "longer than 253 characters"}}) {
        c.push_back(BadInput("Host" + name, with_host(host), u, {what}));
    }

    // --- ports and numbers on the command line ---
    for (const auto& [name, port] :
         std::vector<std::pair<std::string, std::string>>{{"Zero", "0"},
                                                          {"TooBig", "65536"},
                                                          {"Negative", "-1"},
                                                          {"Hex", "0x8fb"},
                                                          {"LeadingSpace", " 22"},
                                                          {"Exponent", "1e3"},
                                                          {"TrailingLetters", "22abc"}}) {
        c.push_back(BadInput("PortFlag" + name, ssh_then({"-h", "@HOST@", "-p", port}), u, {port}));
    }
    c.push_back(BadInput("PortFlagWithoutValue", {"ssh", "-h", "@HOST@", "-p"}, u, {"--port"}));
    for (const auto& [name, option] : std::vector<std::pair<std::string, std::string>>{
             {"ConnectTimeoutHex", "ConnectTimeout=0x10"},
             {"ConnectTimeoutLeadingSpace", "ConnectTimeout= 5"},
             {"ConnectTimeoutZero", "ConnectTimeout=0"},
             {"ServerAliveIntervalNegative", "ServerAliveInterval=-1"},
             {"ServerAliveIntervalExponent", "ServerAliveInterval=1e3"},
             {"PortHex", "Port=0x16"}}) {
        c.push_back(BadInput("Option" + name, ssh_then({"-o", option}), u, {"-o " + option}));
    }
    c.push_back(BadInput("OptionUnsupported", ssh_then({"-o", "LocalForward=8080 h:80"}), u,
                         {"-o LocalForward=8080 h:80: unsupported option"}));
    c.push_back(BadInput("OptionWithoutValue", ssh_then({"-o", "StrictHostKeyChecking"}), u,
                         {"expected Key=Value"}));
    c.push_back(BadInput("OptionStrictMaybe", ssh_then({"-o", "StrictHostKeyChecking=maybe"}), u,
                         {"expected yes, accept-new or no"}));
    c.push_back(BadInput("ReconnectTimeoutNegative", train_with({"--reconnect-timeout", "-5"}), u,
                         {"--reconnect-timeout", "-5"}));
    c.push_back(BadInput("ReconnectTimeoutWord", train_with({"--reconnect-timeout", "abc"}), u,
                         {"--reconnect-timeout", "abc"}));
    c.push_back(BadInput("ReconnectTimeoutHex", train_with({"--reconnect-timeout", "0x10"}), u,
                         {"--reconnect-timeout", "0x10"}));
    c.push_back(BadInput("MaxRestartsNegative", train_with({"--max-restarts", "-1"}), u,
                         {"--max-restarts", "-1"}));
    c.push_back(BadInput("PriceWord", train_with({"--price", "abc"}), u,
                         {"--price", "'abc' is not a price in USD per hour"}));
    c.push_back(BadInput("PriceNegative", train_with({"--price=-1"}), u, {"--price", "'-1'"}));
    c.push_back(BadInput("MaxHoursNegative", train_with({"--max-hours", "-1"}), u,
                         {"--max-hours", "'-1' is not a number of hours above 0"}));
    c.push_back(
        BadInput("MaxHoursZero", train_with({"--max-hours", "0"}), u, {"--max-hours", "'0'"}));
    c.push_back(
        BadInput("MaxHoursInf", train_with({"--max-hours", "inf"}), u, {"--max-hours", "'inf'"}));
    c.push_back(BadInput("MaxCostNan", train_with({"--max-cost", "nan"}), u,
                         {"--max-cost", "'nan' is not an amount of USD above 0"}));
    c.push_back(BadInput("MaxCostWithoutPrice", train_with({"--max-cost", "5"}), u,
                         {"--max-cost needs a price"}));
    c.push_back(BadInput("ReconnectTimeoutTooBig", train_with({"--reconnect-timeout", "604801"}), u,
                         {"--reconnect-timeout", "604801"}));
    c.push_back(BadInput("KeygenLengthHex", {"ssh-keygen", "bad", "-t", "rsa", "-l", "0x800"}, u,
                         {"0x800"}));
    return c;
}

// Unknown, misplaced, unbuilt and misspelt flags; missing commands.
std::vector<BadInput> catalogue_flags() {
    const int u = kExitUsage;
    std::vector<BadInput> c;
    c.push_back(BadInput("UnknownFlagBeforeCommand", ssh_then({"--bogus"}), u, {"--bogus"}));
    c.push_back(BadInput("UnknownFlagBeforeModel", {"ssh", "train", "--bogus", "m"}, u,
                         {"unknown option --bogus before MODEL"}));
    c.push_back(BadInput("EscapeSequenceFlag", ssh_then({"--\x1b[2Jx"}), u, {"\\x1b[2Jx"}));
    c.push_back(BadInput("TrainFlagBeforeStatus", ssh_then({"--clean"}), u,
                         {"only train takes it, not status"}));
    c.push_back(BadInput("TrainWithoutModel", {"ssh", "train"}, u, {"no model given"}));
    // A typo of one of mlt's options is refused (after `--` it would go on).
    c.push_back(BadInput("RestoreWithClean", train_with({"--restore", "--clean"}), u,
                         {"--restore with --clean"}));
    c.push_back(BadInput("RestoreWithResume", train_with({"--restore", "--resume"}), u,
                         {"--restore with --resume"}));
    c.push_back(BadInput("FallbackHostPrice", kTrain, u,
                         {"fallback_hosts entry 2: 'x' after the host gpu2 is not "
                          "price_per_hour=USD"})
                    .with_settings(kSettings + "  fallback_hosts: [gpu1, \"gpu2 x\"]\n"));
    c.push_back(BadInput("FallbackHostSpec", kTrain, u, {"fallback_hosts entry 1: "})
                    .with_settings(kSettings + "  fallback_hosts: [\"gpu:99999\"]\n"));
    c.push_back(BadInput("MisspeltSyncEvery", train_with({"--epochs", "1", "--sync-evry", "60"}), u,
                         {"--sync-evry", "did you mean --sync-every?"}));
    c.push_back(
        BadInput("MisspeltNoWait", train_with({"--no-wiat"}), u, {"did you mean --no-wait?"}));
    c.push_back(
        BadInput("SyncEveryWord", train_with({"--sync-every", "abc"}), u, {"--sync-every", "abc"}));
    c.push_back(BadInput("SyncEveryNegative", train_with({"--sync-every", "-1"}), u,
                         {"--sync-every", "-1"}));
    c.push_back(BadInput("SettingsSyncEveryFraction", kTrain, u,
                         {"@SETTINGS@:6:15: ssh.sync_every must be an integer from 0 to 604800, "
                          "got '0.5'"})
                    .with_settings(kSettings + "  sync_every: 0.5\n"));
    c.push_back(BadInput("SettingsPricePerHourWord", kStatus, u,
                         {"@SETTINGS@:6:19: ssh.price_per_hour must be a number"})
                    .with_settings(kSettings + "  price_per_hour: cheap\n"));
    c.push_back(BadInput("SshWithoutCommand", {"ssh"}, u, {"mlt ssh needs a COMMAND"}));
    c.push_back(BadInput("UnknownCommand", {"ssh", "rm", "-rf"}, u, {"rm"}));
    // MLTK's other commands: named as unsupported, with the ones mlt ssh has.
    c.push_back(
        BadInput("UnsupportedCommandEvaluate", {"ssh", "evaluate", "m"}, u,
                 {"unsupported command 'evaluate'",
                  "train, logs, stop, download, tensorboard, status, doctor, forward, instances or "
                  "release"}));
    // A typo of a command, at each level: -h after it is mlt's help, yet the typo is reported.
    c.push_back(BadInput(
        "MisspeltCommand", {"shh", "-h", "127.0.0.1", "status"}, u,
        {"unknown command 'shh'; did you mean 'ssh'?", "ssh, ssh-keygen, jobs or completion"}));
    c.push_back(BadInput(
        "MisspeltSshCommand", with_host("127.0.0.1", {"trian", "m"}), u,
        {"unknown command 'trian'; did you mean 'train'?", "forward, instances or release"}));
    // CLI11's own messages, said in mlt's words.
    c.push_back(BadInput("KeygenTypeDsa", {"ssh-keygen", "k", "-t", "dsa"}, u,
                         {"'dsa' is not a key type mlt makes: use ed25519 or rsa"}));
    c.push_back(BadInput("KeygenLengthTooBig", {"ssh-keygen", "k", "-t", "rsa", "-l", "65536"}, u,
                         {"--length", "'65536' is not a decimal number from 2048 to 16384"}));
    c.push_back(
        BadInput("PortWithoutValue", {"ssh", "-p"}, u, {"option --port of mlt ssh needs a value"}));
    c.push_back(BadInput("UnknownOptionOfStatus", ssh_then({"--raw-consol"}), u,
                         {"unknown option --raw-consol for mlt ssh status"}));
    c.push_back(BadInput("KeygenWithoutName", {"ssh-keygen"}, u, {"mlt ssh-keygen needs NAME"}));
    return c;
}

// Workspace, ssh config and key paths; empty values; contradicting flags.
std::vector<BadInput> catalogue_paths_and_conflicts() {
    const int u = kExitUsage;
    std::vector<BadInput> c;
    c.push_back(BadInput("WorkspaceMissing", train_with({"--workspace", "@HOME@/nowhere"}), u,
                         {"workspace @HOME@/nowhere is not a directory"}));
    c.push_back(BadInput("SshConfigMissing", ssh_then({"-F", "@HOME@/no_config"}), u,
                         {"cannot read ssh config @HOME@/no_config"}));
    // -o and -F after MODEL are mlt's (as -h -p -i are), not words for the training.
    c.push_back(BadInput("OptionAfterModel", train_with({"-o", "LocalForward=8080 h:80"}), u,
                         {"-o LocalForward=8080 h:80: unsupported option"}));
    c.push_back(BadInput("SshConfigAfterModel", train_with({"--epochs", "1", "-F", "@HOME@/no"}), u,
                         {"cannot read ssh config @HOME@/no"}));
    // Reading a FIFO would wait for a writer for ever; a directory or binary file was ignored.
    c.push_back(
        BadInput("SshConfigFifo", ssh_then({"-F", "@HOME@/fifo"}), u,
                 {"ssh config @HOME@/fifo is not a regular file (a FIFO)"})
            .with_prepare([](const Fill& fill) { ::mkfifo(fill("@HOME@/fifo").c_str(), 0600); }));
    c.push_back(BadInput("SshConfigDirectory", ssh_then({"-F", "@HOME@/.ssh"}), u,
                         {"ssh config @HOME@/.ssh is not a regular file (a directory)"}));
    c.push_back(BadInput("SshConfigBinary", ssh_then({"-F", "@HOME@/binary"}), u,
                         {"ssh config @HOME@/binary is not a text file"})
                    .with_prepare(file("@HOME@/binary",
                                       "\x7f"
                                       "ELF" +
                                           std::string(4, '\0') + "Host *\n")));
    // An empty value (a script's unset "$VAR") once meant "not given", and `train ''`,
    // `stop ''` went on to the remote.
    c.push_back(BadInput("KeyPathEmpty", ssh_then({"-i", ""}), u, {"--identity: empty key file"}));
    c.push_back(BadInput("SshConfigEmpty", ssh_then({"-F", ""}), u, {"-F: empty ssh config path"}));
    c.push_back(BadInput("WorkspaceEmpty", train_with({"--workspace", ""}), u,
                         {"--workspace: empty workspace path"}));
    for (const auto& [name, command] : std::vector<std::pair<std::string, std::string>>{
             {"Status", "status"}, {"Logs", "logs"}, {"Stop", "stop"}, {"Download", "download"}})
        c.push_back(
            BadInput("ModelEmpty" + name, {"ssh", command, ""}, u, {"MODEL: empty model name"}));
    c.push_back(BadInput("ModelEmptyTrain", {"ssh", "train", ""}, u, {"empty model name"}));
    c.push_back(BadInput("ModelEmptyTrainResume", {"ssh", "train", "", "--resume"}, u,
                         {"empty model name"}));
    // --resume continues the run the remote holds; --force discards it: asked together,
    // neither may win silently.
    c.push_back(BadInput("ResumeWithForce", train_with({"--resume", "--force"}), u,
                         {"--resume and --force contradict each other"}));
    c.push_back(BadInput("ResumeWithForceBeforeTrain",
                         ssh_then({"--force"}, {"train", "m", "--resume"}), u,
                         {"--resume and --force contradict each other"}));
    return c;
}

// Model and key names that could escape or inject.
std::vector<BadInput> catalogue_model_names() {
    const int u = kExitUsage;
    std::vector<BadInput> c;
    for (const auto& [name, model] : std::vector<std::pair<std::string, std::string>>{
             {"Semicolon", "a;rm -rf ~"},
             {"CommandSubstitution", "$(id)"},
             {"Backquotes", "`id`"},
             {"Newline", "m\nrm -rf ~"},
             {"EscapeSequence", "m\x1b]0;pwned\x07"},
             {"FiveThousandChars", std::string(5000, 'm')}}) {
        c.push_back(
            BadInput("ModelName" + name, {"ssh", "train", model}, u, {"invalid model name"}));
    }
    c.push_back(BadInput("ModelNameTooLong", {"ssh", "train", std::string(201, 'm')}, u,
                         {"invalid model name: 201 characters, more than the 200 allowed"}));
    c.push_back(BadInput("ModelIsArchive", {"ssh", "train", "m.mltk.zip"}, u,
                         {"MODEL m.mltk.zip is a model archive", "give the model's spec"}));
    c.push_back(BadInput("ModelIsArchivePath", {"ssh", "train", "./m.mltk.zip"}, u,
                         {"MODEL ./m.mltk.zip is a model archive"})
                    .with_prepare(file("@PROJECT@/m.mltk.zip", "PK")));
    c.push_back(BadInput("ModelPathEscapes", {"ssh", "train", "../x"}, u,
                         {"model specification ../x not found"}));
    c.push_back(
        BadInput("ModelSpecIsDirectory", {"ssh", "train", "dir.py"}, u, {"dir.py"})
            .with_prepare([](const Fill& fill) { make_dir(fill("@PROJECT@/dir.py"), 0755); }));
    c.push_back(BadInput("StatusModelCommandSubstitution", {"ssh", "status", "$(id)"}, u,
                         {"invalid model name '$(id)'"}));
    c.push_back(
        BadInput("LogsModelSemicolon", {"ssh", "logs", "a;b"}, u, {"invalid model name 'a;b'"}));
    c.push_back(BadInput("StopModelBackquotes", {"ssh", "stop", "`reboot`"}, u,
                         {"invalid model name '`reboot`'"}));
    // A stop acts on the job dir by name: never a glob or a dir above it.
    c.push_back(BadInput("StopModelGlob", {"ssh", "stop", "*"}, u, {"invalid model name '*'"}));
    c.push_back(BadInput("StopModelDotDot", {"ssh", "stop", ".."}, u, {"invalid model name '..'"}));
    c.push_back(
        BadInput("KeygenNameEscapeSequence", {"ssh-keygen", "a\x1b[2Jb"}, u, {"invalid key name"}));
    c.push_back(BadInput("KeygenNameTooLong", {"ssh-keygen", std::string(300, 'k')}, u,
                         {"key name of 300 bytes is too long"}));
    c.push_back(BadInput("KeygenNameWithSlash", {"ssh-keygen", "../../etc/x"}, u,
                         {"invalid key name '../../etc/x'"}));
    return c;
}

// Key files: missing, no file, too open, unreadable, encrypted without a usable passphrase.
std::vector<BadInput> catalogue_keys() {
    const int u = kExitUsage;
    std::vector<BadInput> c;
    c.push_back(BadInput("KeyMissing", ssh_then({"-i", "@HOME@/no_key"}), u,
                         {"key file @HOME@/no_key not found"}));
    c.push_back(BadInput("KeyIsDirectory", ssh_then({"-i", "@HOME@/.ssh"}), u,
                         {"key file @HOME@/.ssh is not a regular file"}));
    c.push_back(BadInput("KeyReadableByOthers", ssh_then({"-i", "@HOME@/key644"}), u,
                         {"key file @HOME@/key644 is readable by others (mode 644)",
                          "chmod 600 @HOME@/key644"})
                    .with_prepare(key_copy("@HOME@/key644", 0644)));
    c.push_back(BadInput("KeyGarbage", ssh_then({"-i", "@HOME@/garbage"}), u,
                         {"key file @HOME@/garbage is not a private key libssh can read"})
                    .with_prepare(file("@HOME@/garbage", "-----BEGIN garbage\n\x01\x02\n")));
    c.push_back(BadInput("KeyIsPublicHalf", ssh_then({"-i", "@HOME@/pub"}), u,
                         {"is not a private key libssh can read", "not the .pub file"})
                    .with_prepare(key_copy("@HOME@/pub", 0600, true)));
    // As ssh-keygen writes it (0644): the advice is the private key, never chmod.
    c.push_back(BadInput("KeyIsPubFile", ssh_then({"-i", "@HOME@/id_x.pub"}), u,
                         {"key file @HOME@/id_x.pub is a public key", "-i @HOME@/id_x)"})
                    .with_prepare(key_copy("@HOME@/id_x.pub", 0644, true)));
    c.push_back(BadInput("KeyEmpty", ssh_then({"-i", "@HOME@/empty"}), u,
                         {"key file @HOME@/empty is not a private key"})
                    .with_prepare(file("@HOME@/empty", "")));
    c.push_back(BadInput("KeyOfSettingsMissing", kStatus, u, {"key file @HOME@/gone not found"})
                    .with_settings(kSettingsHead +
                                   "  connection: {hostname: 127.0.0.1, port: @PORT@, "
                                   "username: @USER@, key_filename: \"@HOME@/gone\"}\n"));
    c.push_back(BadInput("KeyEncryptedWithoutTerminal", ssh_then({"-i", "@HOME@/enc"}), u,
                         {"key file @HOME@/enc is encrypted and no passphrase could be asked"})
                    .with_prepare([](const Fill& fill) {
                        make_ssh_key(fill("@HOME@/enc"), "ed25519", "right horse");
                    }));
    // The hint follows SSH_ASKPASS: set, it is the one that gave no answer.
    c.push_back(
        BadInput("KeyEncryptedAskpassFails", ssh_then({"-i", "@HOME@/enc"}), u,
                 {"no passphrase could be asked", "SSH_ASKPASS (/bin/false) gave no answer"})
            .with_env("SSH_ASKPASS", "/bin/false")
            .with_prepare([](const Fill& fill) {
                make_ssh_key(fill("@HOME@/enc"), "ed25519", "right horse");
            }));
    c.push_back(
        BadInput("KeyWrongPassphraseInSettings", kStatus, u, {"does not decrypt key @HOME@/enc"})
            .with_settings(kSettingsHead + "  connection: {hostname: 127.0.0.1, port: @PORT@, "
                                           "username: @USER@, key_filename: \"@HOME@/enc\", "
                                           "passphrase: wrong}\n")
            .with_prepare([](const Fill& fill) {
                make_ssh_key(fill("@HOME@/enc"), "ed25519", "right horse");
            }));
    return c;
}

// Reaching the server, refused there: nothing may change on the remote.
std::vector<BadInput> catalogue_refused_by_server() {
    std::vector<BadInput> c;
    c.push_back(BadInput("KeyNotAuthorized", ssh_then({"-i", "@HOME@/stranger"}), kExitConnection,
                         {"authentication to", "failed"})
                    .with_prepare([](const Fill& fill) { make_ssh_key(fill("@HOME@/stranger")); })
                    .connecting());
    c.push_back(BadInput("KeyNotAuthorizedTrain",
                         train_with({"--clean", "--force", "-i", "@HOME@/stranger"}),
                         kExitConnection, {"authentication to", "failed"})
                    .with_prepare([](const Fill& fill) { make_ssh_key(fill("@HOME@/stranger")); })
                    .connecting());
    c.push_back(BadInput("HostKeyUnknownStrict",
                         ssh_then({"-o", "StrictHostKeyChecking=yes", "-o",
                                   "UserKnownHostsFile=@HOME@/empty_known_hosts"},
                                  {"train", "m", "--clean", "--force"}),
                         kExitHostKey, {"is unknown", "SHA256:"})
                    .with_prepare(file("@HOME@/empty_known_hosts", ""))
                    .connecting());
    c.push_back(BadInput("HostKeyChanged", train_with({"--clean", "--force"}), kExitHostKey,
                         {"has CHANGED", "ssh-keygen -R"})
                    .with_prepare([](const Fill& fill) {
                        make_ssh_key(fill("@HOME@/impostor"));
                        write_file(fill("@HOME@/.ssh/known_hosts"),
                                   "[127.0.0.1]:" + fill("@PORT@") + " " +
                                       key_type_and_blob(read_file(fill("@HOME@/impostor.pub"))) +
                                       "\n");
                    })
                    .connecting());
    return c;
}

// Every bad input, theme after theme.
std::vector<BadInput> catalogue() {
    std::vector<BadInput> all;
    for (auto* part :
         {catalogue_settings_file, catalogue_settings_values, catalogue_sidecar_and_spec,
          catalogue_hosts_and_numbers, catalogue_flags, catalogue_paths_and_conflicts,
          catalogue_model_names, catalogue_keys, catalogue_refused_by_server}) {
        std::vector<BadInput> cases = part();
        all.insert(all.end(), std::make_move_iterator(cases.begin()),
                   std::make_move_iterator(cases.end()));
    }
    return all;
}

// Names, types, sizes, modes, mtimes and contents of everything below `root`, one line each.
std::string snapshot(const std::string& root) {
    namespace fs = std::filesystem;
    std::string out;
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(root, ec))) return "(absent)";
    std::vector<std::string> lines;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
        struct stat st {};
        const std::string path = it->path().string();
        if (::lstat(path.c_str(), &st) != 0) continue;
        std::string line = path.substr(root.size()) + " mode=" + std::to_string(st.st_mode) +
                           " size=" + std::to_string(st.st_size) +
                           " mtime=" + std::to_string(st.st_mtim.tv_sec) + "." +
                           std::to_string(st.st_mtim.tv_nsec);
        if (S_ISREG(st.st_mode)) line += " content=" + read_file(path);
        lines.push_back(line);
    }
    std::sort(lines.begin(), lines.end());
    for (const auto& l : lines) out += l + "\n";
    return ec ? "(unreadable: " + ec.message() + ")" : out;
}

class BadInputTest : public SshTest, public ::testing::WithParamInterface<BadInput> {
  protected:
    std::string project() const { return sshd().dir() + "/project"; }
    std::string logs_root() const { return sshd().dir() + "/remote-logs"; }

    std::string fill(std::string text) const {
        const std::map<std::string, std::string> values = {
            {"@PORT@", std::to_string(sshd().port())},
            {"@USER@", sshd().user()},
            {"@KEY@", sshd().client_key_path()},
            {"@REMOTE@", sshd().remote_dir()},
            {"@LOGS@", logs_root()},
            {"@HOME@", env().home()},
            {"@PROJECT@", project()},
            {"@SETTINGS@", env().settings_path()},
            {"@HOST@", host_with_dir()},
        };
        for (const auto& [name, value] : values) {
            for (std::size_t at; (at = text.find(name)) != std::string::npos;)
                text.replace(at, name.size(), value);
        }
        return text;
    }

    // A remote with something to lose: a finished job of m, its logs, a file.
    void populate_remote() const {
        make_finished_job("m", 0);
        write_file(sshd().remote_dir() + "/keep.txt", "keep\n");
        make_dir(logs_root(), 0755);
        make_dir(logs_root() + "/m", 0755);
        write_file(logs_root() + "/m/old.log", "an old run\n");
    }

    std::string remote_state() const {
        return "remote dir:\n" + snapshot(sshd().remote_dir()) + "log dirs:\n" +
               snapshot(logs_root());
    }

    // Runs `mlt args...` in the project dir (run_process has no working directory).
    ProcessResult run_in_project(const std::vector<std::string>& args) const {
        std::vector<std::string> argv = {"/bin/sh", "-c",      "cd \"$1\" && shift && exec \"$@\"",
                                         "sh",      project(), mlt_binary()};
        argv.insert(argv.end(), args.begin(), args.end());
        return env().run(argv);
    }
};

// Success when `err` holds exactly one `mlt: error:` line that is short, free of control
// characters and C++ exception text, contains each of `expect`, and every line is mlt's own.
::testing::AssertionResult clear_error(const std::string& err,
                                       const std::vector<std::string>& expect) {
    std::vector<std::string> errors;
    for (const auto& line : split_lines(err)) {
        if (line.rfind("mlt: ", 0) != 0)
            return ::testing::AssertionFailure() << "a stderr line not of mlt's:\n" << err;
        if (line.rfind("mlt: error: ", 0) == 0) errors.push_back(line);
    }
    if (errors.size() != 1)
        return ::testing::AssertionFailure()
               << errors.size() << " 'mlt: error:' lines instead of one:\n"
               << err;
    const std::string& line = errors.front();
    if (line.size() > kMaxErrorLine)
        return ::testing::AssertionFailure() << "the error line has " << line.size()
                                             << " bytes (at most " << kMaxErrorLine << "):\n"
                                             << line.substr(0, 2000);
    for (char ch : err) {
        const auto b = static_cast<unsigned char>(ch);
        if ((b < 0x20 && ch != '\n') || b == 0x7f)
            return ::testing::AssertionFailure()
                   << "stderr has control character " << static_cast<int>(b) << ":\n"
                   << err;
    }
    for (const char* leak : {"std::", "terminate called", "what():", "internal:"}) {
        if (err.find(leak) != std::string::npos)
            return ::testing::AssertionFailure() << "exception text '" << leak << "':\n" << err;
    }
    for (const auto& needle : expect) {
        if (line.find(needle) == std::string::npos)
            return ::testing::AssertionFailure() << "the error line lacks '" << needle << "':\n"
                                                 << line;
    }
    return ::testing::AssertionSuccess();
}

TEST_P(BadInputTest, OneClearLineDocumentedExitNoRemoteEffect) {
    const BadInput& c = GetParam();
    make_dir(project(), 0755);
    trust_server_in(default_known_hosts());
    if (c.settings != kNoFile) env().write_settings(fill(c.settings));
    write_file(project() + "/m.py", fill(c.spec), 0644);
    if (!c.sidecar.empty()) write_file(project() + "/m.ssh.yaml", fill(c.sidecar), 0644);
    for (const auto& [name, value] : c.env) env().set(name, fill(value));
    if (c.prepare) c.prepare([this](const std::string& t) { return fill(t); });
    populate_remote();
    const std::string before = remote_state();
    const std::size_t log_offset = sshd().log_size();

    std::vector<std::string> args;
    for (const auto& a : c.args) args.push_back(fill(a));
    std::vector<std::string> expect;
    for (const auto& e : c.expect) expect.push_back(fill(e));
    ProcessResult r = run_in_project(args);

    EXPECT_EQ(r.exit_code, c.exit_code) << describe(r);
    EXPECT_TRUE(clear_error(r.err, expect));
    EXPECT_EQ(r.out, "") << describe(r);
    EXPECT_EQ(remote_state(), before) << "the remote changed; " << describe(r);
    const auto connections = sshd().connections_since(log_offset);
    if (c.connects) {
        EXPECT_FALSE(connections.empty()) << "the case should reach the server; " << sshd_log();
    } else {
        EXPECT_TRUE(connections.empty())
            << "refused input must not connect; " << describe(r) << sshd_log();
    }
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadInputTest, ::testing::ValuesIn(catalogue()),
                         [](const ::testing::TestParamInfo<BadInput>& case_info) {
                             return case_info.param.name;
                         });

// The control: the same set-up without a bad input works and reaches the server, so each
// case above fails because of its one bad input, and a connection would have been seen.
class BadInputControlTest : public BadInputTest {};

TEST_F(BadInputControlTest, TheSetUpWithoutABadInputConnects) {
    make_dir(project(), 0755);
    trust_server_in(default_known_hosts());
    env().write_settings(fill(kSettings));
    populate_remote();
    const std::size_t log_offset = sshd().log_size();
    ProcessResult r = run_in_project({"ssh", "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(has_text(r.out, "m")) << describe(r);
    EXPECT_EQ(sshd().connections_since(log_offset).size(), 1u) << sshd_log();
}

// Settings mistakes that are only warnings (docs/settings.md): one line each, escaped, and
// the command goes on.
TEST_F(BadInputControlTest, SettingsWarningsAreOneLineEach) {
    make_dir(project(), 0755);
    trust_server_in(default_known_hosts());
    env().write_settings(fill(kSettings) +
                         "  remmote_dir: typo\n"
                         "  \"evil\\nkey\\e[2J\": 1\n"
                         "  " +
                         std::string(1000, 'k') +
                         ": 1\n"
                         "  reconnect_timeout: 1\n"
                         "  reconnect_timeout: 2\n");
    ProcessResult r = run_in_project({"ssh", "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const auto lines = split_lines(r.err);
    ASSERT_EQ(lines.size(), 4u) << describe(r);
    for (const auto& line : lines) {
        EXPECT_EQ(line.rfind("mlt: warning: " + env().settings_path() + ":", 0), 0u) << line;
        EXPECT_LE(line.size(), kMaxErrorLine) << line;
    }
    for (const char* text :
         {"unknown setting ssh.remmote_dir (ignored); did you mean ssh.remote_dir?",
          "unknown setting ssh.evil\\nkey\\x1b[2J (ignored)", "unknown setting ssh.kkkkk",
          "kkkkk (ignored)", "duplicate setting ssh.reconnect_timeout"}) {
        std::size_t n = 0;
        for (const auto& line : lines) n += line.find(text) != std::string::npos ? 1 : 0;
        EXPECT_EQ(n, 1u) << "lines with '" << text << "':\n" << r.err;
    }
    for (char ch : r.err) {
        const auto b = static_cast<unsigned char>(ch);
        EXPECT_FALSE((b < 0x20 && ch != '\n') || b == 0x7f) << "control character " << int(b);
    }
}

// Numbers are decimal everywhere: a leading zero changes nothing (it is not octal), so the
// port of the server written as 0<port> reaches it from -p, -o Port, -h and the settings alike.
TEST_F(BadInputControlTest, LeadingZerosAreDecimalEverywhere) {
    make_dir(project(), 0755);
    trust_server_in(default_known_hosts());
    const std::string port = "0" + std::to_string(sshd().port());
    const std::string user_host = sshd().user() + "@127.0.0.1";
    const std::string key = sshd().client_key_path();
    const std::string dir = "/" + sshd().remote_dir();
    // The first failure ends the test, so that a wrong port costs one connect, not four.
    const std::vector<std::vector<std::string>> runs = {
        {"ssh", "status"},  // the settings below
        {"ssh", "-h", user_host + dir, "-i", key, "-o", "Port=" + port, "status"},
        {"ssh", "-h", user_host + ":" + port + dir, "-i", key, "status"},
        {"ssh", "-h", user_host + dir, "-i", key, "-p", port, "status"},
    };
    env().write_settings(fill(kSettingsHead) + "  connection: {hostname: 127.0.0.1, port: " + port +
                         ", username: " + sshd().user() + ", key_filename: \"" + key + "\"}\n");
    for (const auto& args : runs) {
        const std::string form = args.size() > 2
                                     ? args[args.size() - 3] + " " + args[args.size() - 2]
                                     : "settings port: " + port;
        const std::size_t log_offset = sshd().log_size();
        ProcessResult r = run_in_project(args);
        ASSERT_EQ(r.exit_code, 0) << form << "\n" << describe(r);
        EXPECT_EQ(sshd().connections_since(log_offset).size(), 1u) << form << "\n" << describe(r);
    }
}

}  // namespace
}  // namespace mlt_test
