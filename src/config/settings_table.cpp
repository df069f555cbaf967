#include "settings_table.h"

#include <type_traits>

namespace mlt::settings_detail {

namespace {

// Scalars and `connection`: the higher layer replaces the lower one.
template <auto Member>
void assign(Value&& value, SshSettings& settings) {
    using T = std::decay_t<decltype(settings.*Member)>;
    settings.*Member = std::get<T>(std::move(value));
}

// Settings whose unset state means something (create_venv, venv_packages): the higher
// layer replaces the lower one, and "not set anywhere" stays visible.
template <auto Member>
void assign_set(Value&& value, SshSettings& settings) {
    using T = typename std::decay_t<decltype(settings.*Member)>::value_type;
    settings.*Member = std::get<T>(std::move(value));
}

// List settings: the lower layer's entries first, then this layer's.
template <auto Member>
void append(Value&& value, SshSettings& settings) {
    auto& list = std::get<std::vector<std::string>>(value);
    auto& target = settings.*Member;
    target.insert(target.end(), list.begin(), list.end());
}

// `environment`: per variable, the higher layer wins; a variable keeps the position where
// it was first seen so the exported order is stable across layers.
void merge_environment(Value&& value, SshSettings& settings) {
    for (auto& [name, text] : std::get<EnvironmentList>(value)) {
        bool replaced = false;
        for (auto& entry : settings.environment) {
            if (entry.first == name) {
                entry.second = text;
                replaced = true;
            }
        }
        if (!replaced) settings.environment.emplace_back(name, text);
    }
}

// For a key load_settings reads from the layers themselves (spec_loader): nothing to apply.
void read_by_load_settings(Value&& /*value*/, SshSettings& /*settings*/) {}

void merge_nodes(Value&& value, SshSettings& settings) {
    auto& nodes = std::get<NodesValue>(value);
    if (nodes.master_addr) settings.master_addr = *nodes.master_addr;
    if (nodes.master_port) settings.master_port = *nodes.master_port;
    if (nodes.hosts) settings.node_hosts = std::move(*nodes.hosts);  // a list replaces
}

void merge_transfer(Value&& value, SshSettings& settings) {
    const auto& transfer = std::get<NodesValue>(value);
    if (transfer.connections)
        settings.transfer_connections =
            *transfer.connections == "auto" ? 0 : std::stoi(*transfer.connections);
    if (transfer.min_rate) settings.transfer_min_rate = *transfer.min_rate;
    if (transfer.stall_seconds) settings.transfer_stall_seconds = *transfer.stall_seconds;
}

// A layer's rules come after the lower layers' (the user's, then the model's).
void merge_watch(Value&& value, SshSettings& settings) {
    auto& watch = std::get<WatchValue>(value);
    if (watch.every) settings.watch_every = *watch.every;
    if (watch.idle_gpu_minutes) settings.idle_gpu_minutes = *watch.idle_gpu_minutes;
    if (watch.stop_idle) settings.stop_idle = *watch.stop_idle;
    if (watch.stop_when)
        settings.stop_when.insert(settings.stop_when.end(), watch.stop_when->begin(),
                                  watch.stop_when->end());
}

FieldDecl make(std::string_view name, SettingType type, std::string_view def,
               std::string_view example, std::string_view doc, ApplyFn apply) {
    FieldDecl f;
    f.name = name;
    f.type = type;
    f.default_text = def;
    f.example = example;
    f.doc = doc;
    f.apply = apply;
    return f;
}

FieldDecl choice(std::string_view name, std::vector<std::string_view> choices, std::string_view def,
                 std::string_view example, std::string_view doc, ApplyFn apply) {
    FieldDecl f = make(name, SettingType::choice, def, example, doc, apply);
    f.choices = std::move(choices);
    return f;
}

// One of `words` as "`a`, `b` or `c`" (quote = "`") or "a, b or c".
std::string word_list(const std::vector<std::string_view>& words, const char* quote) {
    std::string out;
    for (size_t i = 0; i < words.size(); ++i) {
        if (i > 0) out += i + 1 == words.size() ? " or " : ", ";
        out += quote + std::string(words[i]) + quote;
    }
    return out;
}

FieldDecl text(std::string_view name, std::string_view def, std::string_view example,
               std::string_view doc, ApplyFn apply, bool non_empty = false) {
    FieldDecl f = make(name, SettingType::string, def, example, doc, apply);
    f.non_empty = non_empty;
    return f;
}

FieldDecl flag(std::string_view name, std::string_view def, std::string_view example,
               std::string_view doc, ApplyFn apply) {
    return make(name, SettingType::boolean, def, example, doc, apply);
}

FieldDecl integer(std::string_view name, std::string_view def, std::string_view example,
                  std::string_view doc, double min, double max, ApplyFn apply) {
    FieldDecl f = make(name, SettingType::integer, def, example, doc, apply);
    f.min = min;
    f.max = max;
    return f;
}

FieldDecl number(std::string_view name, std::string_view def, std::string_view example,
                 std::string_view doc, double min, double max, ApplyFn apply) {
    FieldDecl f = make(name, SettingType::number, def, example, doc, apply);
    f.min = min;
    f.max = max;
    return f;
}

FieldDecl list(std::string_view name, std::string_view example, std::string_view doc, ApplyFn apply,
               std::optional<TransferDirection> transfer = std::nullopt) {
    FieldDecl f = make(name, SettingType::string_list, "`[]`", example, doc, apply);
    f.transfer = transfer;
    return f;
}

FieldDecl special(std::string_view name, SettingType type, std::string_view def,
                  std::string_view example, std::string_view doc, ApplyFn apply) {
    return make(name, type, def, example, doc, apply);
}

std::string bound_text(double value) {
    auto whole = static_cast<long long>(value);
    if (static_cast<double>(whole) == value) return std::to_string(whole);
    std::string s = std::to_string(value);
    while (!s.empty() && s.back() == '0') s.pop_back();
    return s;
}

// Where and how the remote side runs: host, directory, venv, environment.
std::vector<FieldDecl> remote_setup_fields() {
    using S = SshSettings;
    return {
        text("config_path", "`~/.ssh/config`", "~/.ssh/config",
             "OpenSSH client config whose `Host` entries `-h` aliases are looked up in",
             &assign<&S::config_path>),
        text("remote_dir", "`.`", "~/workspace",
             "remote working directory; relative to the login directory unless absolute or `~`",
             &assign<&S::remote_dir>, true),
        flag("create_venv", "`true` when train_cmd is `mltk train ...`, else `false`", "true",
             "create (once) and activate the Python venv `<remote_dir>/.venv` for the user's "
             "commands, as MLTK does",
             &assign_set<&S::create_venv>),
        special("venv_packages", SettingType::string_list, "`wheel silabs-mltk`",
                "[wheel, silabs-mltk]",
                "packages pip-installed into a newly created venv; unset: `wheel silabs-mltk`, "
                "pinned to the local MLTK's version when `python3 -c 'import mltk'` works here "
                "(latest if that version does not install); `[]`: nothing",
                &assign_set<&S::venv_packages>),
        special(
            "connection", SettingType::connection, "none",
            "{hostname: gpu.example.com, port: 22, username: root, key_filename: ~/.ssh/id_gpu}",
            "the host to train on (a list of mappings: one per node); `-h` overrides it",
            &assign<&S::connections>),
        special("environment", SettingType::environment, "`{}`",
                "[CUDA_VISIBLE_DEVICES=0, \"RUN_NAME=first try\"]",
                "variables exported before every remote command: `[NAME=VALUE, ...]` or a mapping",
                &merge_environment),
    };
}

// What a run transfers and runs, in the order of a run.
std::vector<FieldDecl> training_fields() {
    using S = SshSettings;
    return {
        list("upload_files", "[dataset/*.csv, \"~/patch.txt|./patch.txt\"]",
             "files uploaded before training: globs relative to the spec dir (a wildcard "
             "skips secrets and links out of the dir, as a workspace), or `from|to`",
             &append<&S::upload_files>, TransferDirection::upload),
        list(
            "startup_cmds", "[pip install wheel silabs-mltk]",
            "shell commands run in the remote dir before training; the first failure stops the run",
            &append<&S::startup_cmds>),
        list("download_files", "[results/**, \"./out.txt|~/out.txt\"]",
             "files downloaded after training: globs relative to the remote dir, or `from|to`",
             &append<&S::download_files>, TransferDirection::download),
        list("shutdown_cmds", "[echo done]",
             "shell commands run after training, also after a failure or Ctrl+C",
             &append<&S::shutdown_cmds>),
        text("train_cmd", "`mltk train {model}`", "\"python train.py --log-dir {log_dir}\"",
             "training command; placeholders `{model}` `{spec}` `{log_dir}` `{archive}` "
             "`{remote_dir}`; train ARGS are appended",
             &assign<&S::train_cmd>, true),
        text("remote_log_dir", "where the remote MLTK puts it", "\"~/runs/{model}\"",
             "remote log dir collected into the local log dir; placeholders `{model}` "
             "`{remote_dir}`. Unset: for `mltk train`, the remote MLTK's log dir of the model "
             "(it honours the remote `MLTK_CACHE_DIR`); otherwise "
             "`${MLTK_CACHE_DIR:-~/.mltk}/models/<model>` on the remote",
             &assign<&S::remote_log_dir>, true),
        list("model_paths", "[~/models]",
             "local directories searched, with their subdirectories, for `MODEL.py` (before the "
             "current directory)",
             &append<&S::model_paths>),
    };
}

// The link, syncing, the multi-node and cost settings, and the workspace transfer.
std::vector<FieldDecl> link_and_transfer_fields() {
    using S = SshSettings;
    return {
        integer("sync_every", "`0`", "0",
                "seconds between pulls of the remote log dir (logs and checkpoints) while "
                "training, on a second connection (as `--sync-every`); 0: only at the end",
                0, 604800, &assign<&S::sync_every>),
        special("host_key_checking", SettingType::host_key_checking, "`accept-new`", "accept-new",
                "unknown host keys: `yes` refuses, `accept-new` records, `no` accepts without "
                "recording; a changed key: `no` accepts it with a warning (then only key "
                "authentication, known_hosts untouched), the others refuse it",
                &assign<&S::host_key_checking>),
        integer("reconnect_timeout", "`600`", "600",
                "seconds to keep reconnecting after the link dropped or went silent (the run "
                "then continues where it was); 0: give up at once",
                0, 604800, &assign<&S::reconnect_timeout>),
        integer("max_restarts", "`0`", "0",
                "times a `train` restarts its job by itself when it finds it lost (its "
                "processes gone without an exit status: a host restart, a killed wrapper), in "
                "place, as the run's next attempt; 0: a lost job ends the run",
                0, 1000, &assign<&S::max_restarts>),
        list("fallback_hosts", "[\"root@gpu2:22/work\", \"gpu3 price_per_hour=0.4\"]",
             "hosts to continue on when the host is lost (not back within `reconnect_timeout`), "
             "in order: each a host spec as `-h` takes it, optionally followed by "
             "`price_per_hour=USD`; the checkpoints that came home are pushed there and the job "
             "starts as the run's next attempt (see docs/spot.md). A higher layer's list "
             "replaces a lower one's",
             &assign<&S::fallback_hosts>),
        text("provision_cmd", "none", "\"./rent_gpu.sh\"",
             "local command (run with `sh -c`, at most 15 min) that provides a host when the "
             "`fallback_hosts` are used up: its last output line is a host spec as in "
             "`fallback_hosts`; at most 3 times per run",
             &assign<&S::provision_cmd>),
        special("nodes", SettingType::nodes, "see below",
                "{hosts: [], master_addr: \"\", master_port: 0}",
                "the nodes of a multi-node run and their rendezvous (docs/multi-node.md)",
                &merge_nodes),
        special("transfer", SettingType::transfer, "see below",
                "{connections: auto, min_rate: 65536, stall_seconds: 30}",
                "how big files move (docs/architecture.md, \"Big files\"), and the progress "
                "every transfer must make",
                &merge_transfer),
        special("watch", SettingType::watch, "see below",
                "{every: 15, idle_gpu_minutes: 0, stop_idle: false, stop_when: []}",
                "what mlt watches while the job runs (docs/usage.md, \"Watching a run\")",
                &merge_watch),
        number("price_per_hour", "`0.0`", "1.25",
               "USD per hour of the host (as `--price`): the cost shown while waiting, in the "
               "run's summary and in the history, and what `--max-cost` counts; 0: not known",
               0, 1000000, &assign<&S::price_per_hour>),
        text("workspace", "none", "~/src/my_project",
             "local directory uploaded incrementally before training (as `--workspace`)",
             &assign<&S::workspace>),
        choice("compression", {"none", "gzip", "zstd"}, "`zstd`", "none",
               "compression of the tar streams (workspace, upload_files, log dir), level 1; "
               "uploaded files that shrink by less than 10 % (sampled) go uncompressed; "
               "without `zstd` on the remote, none (see docs/usage.md)",
               &assign<&S::compression>),
        choice("spec_loader", {"auto", "mltk", "literals"}, "`auto`", "literals",
               "how the model spec's `ssh_*` values are read: `auto` loads it through MLTK when "
               "`python3` can import `mltk`, else reads its literals; `mltk` requires MLTK; "
               "`literals` never runs Python (see below)",
               &read_by_load_settings),
    };
}

}  // namespace

const std::vector<FieldDecl>& ssh_fields() {
    static const std::vector<FieldDecl> kFields = [] {
        std::vector<FieldDecl> fields = remote_setup_fields();
        for (auto group : {training_fields(), link_and_transfer_fields()})
            fields.insert(fields.end(), group.begin(), group.end());
        return fields;
    }();
    return kFields;
}

const std::vector<FieldDecl>& connection_fields() {
    static const std::vector<FieldDecl> kFields = {
        text("hostname", "none", "gpu.example.com", "host name, address or `~/.ssh/config` alias",
             nullptr),
        integer("port", "`22`", "22", "SSH port", 1, 65535, nullptr),
        text("username", "local user", "root", "login name", nullptr),
        text("key_filename", "agent / default keys", "~/.ssh/id_gpu", "private key file", nullptr),
        text("password", "asked when needed", "\"s3cret\"",
             "password for password or keyboard-interactive authentication, as `--password` "
             "(which wins); also tried as the passphrase of an encrypted key; never logged",
             nullptr),
        text("passphrase", "asked when needed", "\"key s3cret\"",
             "passphrase of an encrypted key file; when it does not decrypt the key, mlt stops "
             "(exit 2); never logged",
             nullptr),
        number("timeout", "`15`", "30",
               "seconds to wait for the connection and the SSH greeting (rounded up); "
               "`-o ConnectTimeout` and the ssh config's `ConnectTimeout` win",
               1, 86400, nullptr),
        flag("look_for_keys", "`true`", "false",
             "`false`: do not try the default keys `~/.ssh/id_ed25519`, `id_ecdsa`, `id_rsa`",
             nullptr),
        flag("allow_agent", "`true`", "false", "`false`: do not use ssh-agent ($SSH_AUTH_SOCK)",
             nullptr),
    };
    return kFields;
}

const std::vector<std::string_view>& ignored_connection_keys() {
    // The other keyword arguments of paramiko's SSHClient.connect: MLTK passes `connection`
    // to it as it is, so MLTK settings may hold them.
    static const std::vector<std::string_view> kKeys = {
        "compress",
        "sock",
        "gss_auth",
        "gss_kex",
        "gss_deleg_creds",
        "gss_host",
        "gss_trust_dns",
        "banner_timeout",
        "auth_timeout",
        "channel_timeout",
        "disabled_algorithms",
        "pkey",
        "transport_factory",
        "auth_strategy",
    };
    return kKeys;
}

const std::vector<FieldDecl>& nodes_fields() {
    static const std::vector<FieldDecl> kFields = {
        list("hosts", "[\"root@10.0.0.5:22/work\", \"root@10.0.0.6:22/work\"]",
             "one host spec per node, `[user@]host[:port][/remote_dir]`, rank 0 first: `train` "
             "runs on all of them when no `-h` is given; each host takes the `connection` entry "
             "at its index for user, key and secrets (a single `connection` mapping serves "
             "every node)",
             nullptr),
        text("master_addr", "see the doc", "\"10.0.0.5\"",
             "`MASTER_ADDR` exported to every node: rank 0's address as the others reach it; "
             "empty: 127.0.0.1 when every node is on loopback, else the first address rank 0 "
             "reports (`hostname -I`; a HostName is often an ssh proxy, so it is never used)",
             nullptr),
        integer("master_port", "`0`", "29500",
                "`MASTER_PORT` exported to every node; 0: a free port found on rank 0", 0, 65535,
                nullptr),
    };
    return kFields;
}

const std::vector<FieldDecl>& transfer_fields() {
    static const std::vector<FieldDecl> kFields = {
        choice("connections", {"auto", "1", "2", "3", "4", "5", "6", "7", "8"}, "`auto`", "4",
               "SSH connections (the run's own included) a file of 32 MiB or more moves over, as "
               "ranges side by side (as `--connections`): `auto` starts with 2 and doubles them "
               "while the rate still gains 10 %, up to 8; over a near link (round trip under 16 "
               "ms) it uses one per two local cores (1 to 8) and ranges only from 256 MiB; a "
               "connection the server refuses (MaxStartups) is no error",
               nullptr),
        integer("min_rate", "`65536`", "16384",
                "the floor under every data stream (a tar stream, a range, a file fetch), in "
                "bytes per second: one that moves fewer than `min_rate` x `stall_seconds` bytes "
                "over the last `stall_seconds` (judged once it has run that long; the streams "
                "side by side on one connection count together, stderr not at all) ends with "
                "an error that says it stalled or trickled, and a connection of several whose "
                "ranges stall gives them to the others; 0: no floor",
                0, 1073741824, nullptr),
        integer("stall_seconds", "`30`", "60", "the window of `min_rate`, in seconds", 1, 86400,
                nullptr),
    };
    return kFields;
}

const std::vector<FieldDecl>& watch_fields() {
    static const std::vector<FieldDecl> kFields = {
        integer("every", "`15`", "30",
                "seconds between samples of the host while the job is followed (GPU use and "
                "memory from `nvidia-smi` when the host has it, load, free disk), taken by the "
                "log follow's own command: a status line on a terminal, `mlt-metrics.jsonl` in "
                "the local log dir, mean and peak GPU use in the summary; 0: no samples",
                0, 3600, nullptr),
        number("idle_gpu_minutes", "`0`", "10",
               "when every GPU stays under 10 % this many minutes while the job runs, mlt warns "
               "once (and stops the job with `stop_idle`); 0: off",
               0, 100000, nullptr),
        flag("stop_idle", "`false`", "true",
             "with `idle_gpu_minutes`: stop the job as a limit (collected, `shutdown_cmds` "
             "run, exit 5)",
             nullptr),
        special("stop_when", SettingType::stop_rules, "`[]`",
                "['loss[=:] *nan', {metric: 'val_loss[=:] *([0-9.eE+-]+)', mode: min, "
                "patience: 5}]",
                "early-stop rules on the job's console lines: a regex (ECMAScript, found "
                "anywhere in a line), or a plateau rule `{metric: REGEX with a group around the "
                "value, mode: min|max (default min), patience: N (default 5)}` that fires after N "
                "values without a new best; the first rule that fires stops the job, which is "
                "still collected, and mlt exits 6; the user's rules come first, then the model's",
                nullptr),
    };
    return kFields;
}

const std::vector<FieldDecl>& plateau_fields() {
    static const std::vector<FieldDecl> kFields = [] {
        FieldDecl metric = text("metric", "none", "'val_loss[=:] *([0-9.eE+-]+)'",
                                "the metric's regex, with a group around the value", nullptr);
        metric.non_empty = true;
        return std::vector<FieldDecl>{
            metric,
            choice("mode", {"min", "max"}, "`min`", "max", "whether lower or higher is better",
                   nullptr),
            integer("patience", "`5`", "5", "values in a row without a new best that fire it", 1,
                    1000000, nullptr),
        };
    }();
    return kFields;
}

std::string type_name(const FieldDecl& field) {
    switch (field.type) {
        case SettingType::string:
            return "string";
        case SettingType::boolean:
            return "bool";
        case SettingType::integer:
            return "integer (" + bound_text(field.min) + ".." + bound_text(field.max) + ")";
        case SettingType::number:
            return "number (" + bound_text(field.min) + ".." + bound_text(field.max) + ")";
        case SettingType::string_list:
            return "list of strings";
        case SettingType::environment:
            return "list of `NAME=VALUE` or mapping";
        case SettingType::connection:
            return "mapping or list of mappings";
        case SettingType::nodes:
        case SettingType::transfer:
        case SettingType::watch:
            return "mapping";
        case SettingType::stop_rules:
            return "list of regexes or plateau mappings";
        case SettingType::host_key_checking:
            return "`yes`, `accept-new` or `no`";
        case SettingType::choice:
            return word_list(field.choices, "`");
    }
    return "";
}

std::string type_description(const FieldDecl& field) {
    switch (field.type) {
        case SettingType::string:
            return field.non_empty ? "a non-empty string" : "a string";
        case SettingType::boolean:
            return "true or false";
        case SettingType::integer:
            return "an integer from " + bound_text(field.min) + " to " + bound_text(field.max);
        case SettingType::number:
            return "a number from " + bound_text(field.min) + " to " + bound_text(field.max);
        case SettingType::string_list:
            return "a list of strings";
        case SettingType::environment:
            return "a list of NAME=VALUE strings or a mapping of NAME: VALUE";
        case SettingType::connection:
            return "a mapping (hostname, port, username, key_filename) or a list of such mappings";
        case SettingType::nodes:
            return "a mapping (hosts, master_addr, master_port)";
        case SettingType::transfer:
            return "a mapping (connections, min_rate, stall_seconds)";
        case SettingType::watch:
            return "a mapping (every, idle_gpu_minutes, stop_idle, stop_when)";
        case SettingType::stop_rules:
            return "a list of rules, each a regex or a mapping (metric, mode, patience)";
        case SettingType::host_key_checking:
            return "one of yes, accept-new, no";
        case SettingType::choice:
            return "one of " + word_list(field.choices, "");
    }
    return "";
}

const FieldDecl* find_field(const std::vector<FieldDecl>& fields, std::string_view name) {
    for (const auto& f : fields) {
        if (f.name == name) return &f;
    }
    return nullptr;
}

bool is_shell_name(std::string_view name) {
    if (name.empty()) return false;
    for (size_t i = 0; i < name.size(); ++i) {
        char c = name[i];
        bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        bool digit = c >= '0' && c <= '9';
        if (!letter && !(digit && i > 0)) return false;
    }
    return true;
}

}  // namespace mlt::settings_detail
