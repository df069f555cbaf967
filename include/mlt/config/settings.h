#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mlt/provider/provider.h"

namespace mlt {

// OpenSSH StrictHostKeyChecking: yes refuses unknown hosts, accept-new records them,
// no connects to unknown hosts without recording them. A changed key is refused, except by
// no, which accepts it with a warning and allows key authentication only.
enum class HostKeyChecking { yes, accept_new, no };

// Reads an OpenSSH StrictHostKeyChecking word: yes/true, accept-new, no/false/off (any case).
// Returns nullopt for anything else.
std::optional<HostKeyChecking> parse_host_key_checking(std::string_view text);

// One entry of `connection` (a mapping, or a list of mappings for several nodes): MLTK's
// keyword arguments of paramiko's SSHClient.connect. Empty strings count as not set.
struct ConnectionSettings {
    std::string hostname;
    int port = 0;  // 0: not set
    std::string username;
    std::string key_filename;
    std::optional<std::string> password;    // as --password; never logged
    std::optional<std::string> passphrase;  // of encrypted key files; never logged
    int timeout_s = 0;                      // connect timeout, rounded up; 0: not set
    std::optional<bool> look_for_keys;      // false: ~/.ssh/id_* keys are not tried
    std::optional<bool> allow_agent;        // false: ssh-agent is not used
};

// One `watch.stop_when` rule (docs/settings.md): an ECMAScript regex searched in each console
// line, or a plateau rule on a metric that a regex captures (its first group).
struct StopRule {
    std::string regex;
    bool plateau = false;
    bool maximize = false;  // plateau: mode max (a higher value is better)
    int patience = 5;       // plateau: values in a row without a new best that fire it
};

// What a `watch.on_failure` rule makes of a failed or lost attempt (docs/usage.md, "When an
// attempt fails"): the run ends (no_restart), leaves the host for a standby one (exclude_host),
// or starts the job again in place (restart).
enum class FailureAction { no_restart, exclude_host, restart };

// The word of `then` as the settings write it ("no_restart", "exclude_host", "restart").
const char* failure_action_name(FailureAction action);

// One `watch.on_failure` rule: an ECMAScript regex searched in each of the attempt's last lines.
struct FailureRule {
    std::string regex;
    FailureAction then = FailureAction::no_restart;
    bool builtin = false;  // one of default_failure_rules()
};

// The rules that apply after the settings' own unless `watch.on_failure_defaults: false`.
const std::vector<FailureRule>& default_failure_rules();

// `checkpoints:` (docs/usage.md, "Checkpoints"): which files of the log dir are checkpoints,
// which of them stay on both ends, and when one is whole. Off while `pattern` is empty.
struct CheckpointSettings {
    std::string pattern;      // a glob relative to the log dir (`*` crosses `/`); empty: off
    int keep_last = 0;        // the newest N stay; 0 with keep_best.n 0: nothing is deleted
    std::string best_metric;  // ECMAScript with a group around the value; empty: none
    bool best_max = false;    // keep_best.mode max: higher is better
    int best_n = 0;           // the best K by the metric stay
    std::string best_file;    // the metric from this file of the log dir; empty: the console
    int settle_seconds = 10;  // unchanged this long (size and mtime) while the job runs: whole
    std::string marker;       // "{name}.done": a file beside it that makes one whole
    bool on() const { return !pattern.empty(); }
    bool deletes() const { return on() && (keep_last > 0 || best_n > 0); }
};

// The body a `notify` target is sent (docs/usage.md, "Notifications"): json, the event as one
// object; ntfy, a text POST with a Title header; slack, `{"text": ...}`.
enum class NotifyFormat { json, ntfy, slack };

// The word of `format` as the settings and the targets file write it ("json", "ntfy", "slack").
const char* notify_format_name(NotifyFormat format);

// One `notify` target. The URL is a secret (a Slack webhook carries its token): it is never
// printed nor put in argv; messages show masked_url(url).
struct NotifyTarget {
    std::string url;
    NotifyFormat format = NotifyFormat::json;
};

// Which side sends the events that happen on the host: its guard (host), or only an attached mlt
// (laptop), which keeps the URLs off the host.
enum class NotifyFrom { host, laptop };

// `url` as a message may show it: its scheme and host (no user, password, path nor query),
// then "/…" ("https://hooks.slack.com/…"); "(a URL)" when it has no plain scheme://host[:port].
std::string masked_url(const std::string& url);

// Why `url` is no usable notify URL (not http:// or https://, no host, a blank, a control
// character, a non-ASCII byte, `"` or `\`), or nullopt. The reason never quotes the URL.
std::optional<std::string> notify_url_problem(const std::string& url);

// The `ssh:` section after precedence and merging (docs/settings.md).
struct SshSettings {
    std::string config_path = "~/.ssh/config";
    std::string remote_dir = ".";
    // Unset: true when train_cmd is MLTK's `mltk train` (as in MLTK), else false.
    std::optional<bool> create_venv;
    // Unset: wheel and silabs-mltk (pinned to the local MLTK's version when there is one).
    std::optional<std::vector<std::string>> venv_packages;
    std::vector<ConnectionSettings> connections;
    // In file order; a later layer's value replaces an earlier one in place.
    std::vector<std::pair<std::string, std::string>> environment;
    std::vector<std::string> upload_files;
    std::vector<std::string> startup_cmds;
    std::vector<std::string> download_files;
    std::vector<std::string> shutdown_cmds;
    std::string train_cmd = "mltk train {model}";
    // Empty: where the remote MLTK puts it (see docs/settings.md).
    std::string remote_log_dir;
    std::vector<std::string> model_paths;
    int sync_every = 0;  // seconds between pulls while training; 0: only at the end
    HostKeyChecking host_key_checking = HostKeyChecking::accept_new;
    std::vector<std::string> node_hosts;  // nodes.hosts: rank 0 first
    int node_count = 1;                   // nodes.count: the machines a provider rents
    int transfer_connections = 0;         // transfer.connections; 0: auto
    int transfer_min_rate = 65536;        // transfer.min_rate: bytes per second; 0: no floor
    int transfer_stall_seconds = 30;      // transfer.stall_seconds: the floor's window
    std::string master_addr;
    int master_port = 0;  // 0: a free port found on rank 0
    double price_per_hour = 0;
    std::string workspace;
    std::string compression = "zstd";        // none | gzip | zstd (validated when read)
    int reconnect_timeout = 600;             // seconds to keep reconnecting; 0: off
    int max_restarts = 0;                    // restarts of a lost job by the run itself
    double unattended_shutdown_minutes = 0;  // the host's guard runs shutdown_cmds; 0: off
    // Hosts to continue a run on when its host is lost ("HOSTSPEC [price_per_hour=USD]").
    std::vector<std::string> fallback_hosts;
    std::string provision_cmd;        // a local command printing one more such host; empty: none
    int watch_every = 15;             // watch.every: seconds between samples of the host
    double idle_gpu_minutes = 0;      // watch.idle_gpu_minutes; 0: off
    bool stop_idle = false;           // watch.stop_idle
    double silent_minutes = 0;        // watch.silent_minutes; 0: off
    bool stop_silent = false;         // watch.stop_silent
    std::vector<StopRule> stop_when;  // watch.stop_when: the user's rules, then the model's
    // watch.on_failure: the model's rules, then the user's (the first that matches decides).
    std::vector<FailureRule> on_failure;
    bool on_failure_defaults = true;  // watch.on_failure_defaults: default_failure_rules() last
    CheckpointSettings checkpoints;   // a higher layer's mapping replaces a lower one's
    ProviderSettings provider;        // a higher layer's mapping replaces a lower one's
    // Webhooks told of the run's events; a higher layer's list replaces a lower one's.
    std::vector<NotifyTarget> notify;
    // A local command fed each event's JSON on stdin; empty: none.
    std::string notify_cmd;
    NotifyFrom notify_from = NotifyFrom::host;
};

// Whether `train_cmd` runs MLTK's own trainer (`mltk train ...`).
bool is_mltk_train_cmd(const std::string& train_cmd);

// The create_venv in effect: the setting, else true exactly for MLTK's train_cmd.
bool effective_create_venv(const SshSettings& settings);

// A problem that does not stop the run (unknown key); printed as a warning by the caller.
struct SettingsWarning {
    std::string file;
    int line = 0;    // 1-based
    int column = 0;  // 1-based
    std::string message;
};

// Where settings come from. Empty paths are skipped.
struct SettingsSources {
    std::string user_settings_path;   // see default_user_settings_path()
    std::string model_settings_path;  // `<spec dir>/<spec stem>.ssh.yaml`, may not exist
    std::string spec_path;            // the model spec (.py), for its SshMixin literals
};

// $MLTK_USER_SETTINGS_PATH, else ~/.mltk/user_settings.yaml (MLTK's location). A file the
// variable names must exist (config error otherwise); the default one may be missing.
std::string default_user_settings_path();

// `<spec dir>/<spec stem>.ssh.yaml` for a model specification path.
std::string model_settings_path_for(const std::string& spec_path);

// Whether the settings file at `path` (a sidecar) sets a connection password or passphrase,
// or a `notify` URL; false when it does not exist. One that cannot be read counts as holding one.
bool settings_file_holds_secret(const std::string& path);

// Loads defaults < user settings < the spec's SshMixin literals < model settings, where a key
// the model settings set leaves the spec's value out entirely, except `environment`, which
// merges per variable across every layer, the higher one winning (a leading `~` in any path is
// expanded). Never runs Python: `spec_loader` is not consulted (the overload with SpecOptions,
// mlt/config/spec_options.h, loads the spec through a local MLTK as the commands do). A missing
// file is no error; an unreadable one throws mlt::Error (io). Malformed YAML or a wrong type throws
// mlt::Error (config, exit 2) whose message names file, line and column (the spec's own line for
// its literals); unknown keys and SshMixin settings that are not literals are appended to
// `warnings`. Validates the path rules of upload_files/download_files (see parse_transfer_spec).
SshSettings load_settings(const SettingsSources& sources, std::vector<SettingsWarning>* warnings);

// Direction of a transfer entry, for MLTK's path rules.
enum class TransferDirection { upload, download };

// One upload_files/download_files entry. Without `|`: a glob (`*`, `?`, `[..]`, `**`)
// relative to the spec dir (upload) or remote dir (download); it may not be absolute nor
// contain `..` components. With `|`: `<from>|<to>`, no wildcards, either side may be
// absolute or start with `~`. Blanks around each side are trimmed.
struct TransferSpec {
    std::string from;
    std::string to;        // equals `from` for a glob
    bool is_glob = false;  // true for every entry without `|`, wildcards or not
};

// Parses and validates one entry; throws mlt::Error (config, exit 2) that quotes the entry
// and says which rule it breaks.
TransferSpec parse_transfer_spec(const std::string& entry, TransferDirection direction);

// A remote path of the settings: absolute, `~` and `$VAR` paths stand alone (the variable
// expands on the remote), others are relative to `remote_dir`.
std::string remote_path_in(const std::string& remote_dir, const std::string& path);

// A local path of the settings: `~` expanded; absolute paths stand alone, others are under
// `base`.
std::string local_path_in(const std::string& base, const std::string& path);

// The settings reference as Markdown, generated from the declaration table; docs/settings.md
// is this text (a unit test keeps them equal).
std::string settings_reference_markdown();

}  // namespace mlt
