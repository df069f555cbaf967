#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlt {

// One keyword line of an ssh client config that applies to a host, and where it was read.
struct SshConfigValue {
    std::vector<std::string> args;  // the words after the keyword, quotes removed; never empty
    std::string raw;                // the text after the keyword as written (ProxyCommand)
    std::string file;
    int line = 0;   // 1-based
    int order = 0;  // position among all lines read, across included files
    // "file:line" for messages.
    std::string where() const { return file + ":" + std::to_string(line); }
};

// What an OpenSSH client config says for one host, as `ssh HOST` reads it: `Host` patterns
// are matched against the host as typed (the alias, not its HostName), and the first value of
// a keyword wins (IdentityFile: every value is kept, in order).
class SshConfigEntry {
  public:
    explicit SshConfigEntry(std::string host = {}) : host_(std::move(host)) {}

    // The host as typed (the alias).
    const std::string& host() const { return host_; }
    // The first line of `keyword` (any case) that applies, or nullptr.
    const SshConfigValue* first(std::string_view keyword) const;
    // The first word of that line, or nullopt.
    std::optional<std::string> value(std::string_view keyword) const;
    // Every line of `keyword` that applies, in file order (empty when none).
    std::vector<SshConfigValue> all(std::string_view keyword) const;
    // The name to connect to: HostName with `%h` (the alias) and `%%` expanded, else the
    // alias itself.
    std::string hostname() const;

    // The lower-case keywords that have a value, each with its first line.
    std::vector<std::pair<std::string, const SshConfigValue*>> keywords() const;
    // What the reader could not do as ssh would (a `Match exec` it skipped, ...), one
    // sentence each naming the file and line; for the caller to show.
    const std::vector<std::string>& warnings() const { return warnings_; }

    // Records a line for `keyword` (reader use); false when that very line is already there.
    bool add(std::string keyword, SshConfigValue value);
    // Records a warning once (reader use).
    void warn(std::string text);

  private:
    std::string host_;
    std::map<std::string, std::vector<SshConfigValue>> values_;  // by lower-case keyword
    std::vector<std::string> warnings_;
};

// OpenSSH's match_pattern_list: `value` matches some of the comma-separated wildcard patterns
// of `list` (`*`, `?`; util/text.h wildcard_match) and no negated `!pattern`. Host patterns of
// the config and of known_hosts are read this way.
bool match_pattern_list(const std::string& list, const std::string& value, bool fold_case);

// Reads the client config at `path` for `host` (see SshConfigEntry), as ssh does:
// - `Include` is followed where it applies (globs, `~`; relative paths are under ~/.ssh, as
//   for a user config), nested at most 16 deep;
// - `Match` lines are evaluated: `all`, `host` (against the HostName found so far, else
//   `host`), `originalhost` (the alias), `user` (`user` when given, else the User found so far,
//   else the local user), `localuser`, `final` and `canonical` (true in a second pass that
//   `final` asks for), each negatable with `!`, patterns comma-separated. `exec`, `address`,
//   `localaddress`, `localport`, `rdomain`, `tagged`, `version`, `sessiontype` and `command`
//   are not evaluated: the block is skipped, with a warning.
// A missing file gives an empty entry. Throws mlt::Error (config, exit 2) naming the file and
// line for an Include nested too deep, a Match criterion ssh does not know either, or one
// without its argument.
SshConfigEntry read_ssh_config(const std::string& path, const std::string& host,
                               const std::string& user = {});

// The first value of `keyword` for `host` in the config at `path` (read_ssh_config), or
// nullopt when the file is missing or sets nothing.
std::optional<std::string> ssh_config_lookup(const std::string& path, const std::string& host,
                                             const std::string& keyword);

// Refuses (usage error, exit 2) an ssh config named with -F that cannot be read as one: a
// missing or unreadable file, a directory, a FIFO or device (reading one could hang), or a
// file with NUL bytes (not a text config). `typed` is the path as given.
void check_ssh_config_file(const std::string& typed);

}  // namespace mlt
