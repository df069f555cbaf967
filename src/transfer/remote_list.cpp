// Listing remote files in one round trip, NUL-separated so any name survives.

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "internal.h"
#include "mlt/util/shell.h"

namespace mlt {

using namespace transfer_detail;

namespace {

// A missing base is an empty list, not an error: nothing was uploaded there yet.
constexpr char kListPrefix[] = "[ -d \"$B\" ] || exit 0; cd -- \"$B\" && find . -type f ";

std::string list_command(const std::string& remote_base, const char* print) {
    return "B=" + shell_quote_path(remote_base) + "; " + kListPrefix + print;
}

std::string strip_dot_slash(std::string_view name) {
    while (name.substr(0, 2) == "./") name.remove_prefix(2);
    return std::string(name);
}

// Calls `each` with every NUL-terminated record of `out`.
template <typename Each>
void for_each_record(const std::string& out, Each each) {
    size_t start = 0;
    while (start < out.size()) {
        size_t end = out.find('\0', start);
        if (end == std::string::npos) end = out.size();
        if (end > start) each(std::string_view(out).substr(start, end - start));
        start = end + 1;
    }
}

}  // namespace

std::vector<std::string> list_remote_files(Remote& remote, const std::string& remote_base) {
    RemoteOutput out = remote.run(list_command(remote_base, "-print0"));
    if (out.exit_status != 0)
        throw remote_failure(remote, "listing " + remote_base, out.exit_status, out.err);
    std::vector<std::string> files;
    for_each_record(out.out, [&](std::string_view r) { files.push_back(strip_dot_slash(r)); });
    std::sort(files.begin(), files.end());
    return files;
}

namespace {

// What the info listings print per file (GNU find): readable or not, size, mtime, ctime,
// inode, path. The path is last, so spaces in it are harmless. The formats travel in $F and
// $G, so that they need no quoting inside `sh -c '...'`.
constexpr char kInfoFormats[] = "F='r %s %T@ %C@ %i %p\\0' G='u %s %T@ %C@ %i %p\\0'; export F G; ";
constexpr char kInfoPrint[] = "\\( -readable -printf \"$F\" -o -printf \"$G\" \\)";
// The remote clock before anything is looked at, as a record of its own:
// "@<seconds>.<nanoseconds>" (a date without %N: "@<seconds>.N" or so, read as the second).
constexpr char kClock[] = "printf '@%s\\0' \"$(date +%s.%N)\"";

// A find error about one entry (LC_ALL=C): it cannot be read, it went away while find walked
// the tree, or its name is too long. The listing of the rest is complete.
bool entry_error(std::string_view line) {
    for (const char* end :
         {": Permission denied", ": No such file or directory", ": File name too long"}) {
        const std::string_view e(end);
        if (line.size() > e.size() && line.substr(0, 6) == "find: " &&
            line.substr(line.size() - e.size()) == e)
            return true;
    }
    return false;
}

// Parses the records of kClock and kInfoPrint into sorted infos.
std::vector<RemoteFileInfo> parse_file_info(Remote& remote, const std::string& remote_base,
                                            const RemoteOutput& out, int64_t* clock_ns) {
    auto bad_output = [&] {
        return remote_error(
            "listing " + remote_base + " on " + remote.name() + " gave unexpected output",
            "the remote needs GNU find (findutils)");
    };
    auto number = [&](std::string_view text, auto& value) {
        // 18 digits at most: more would wrap (no file or inode number is that large).
        if (text.empty() || text.size() > 18) throw bad_output();
        value = 0;
        for (char c : text) {
            if (c < '0' || c > '9') throw bad_output();
            value = value * 10 + static_cast<std::decay_t<decltype(value)>>(c - '0');
        }
    };
    if (clock_ns) *clock_ns = 0;
    std::vector<RemoteFileInfo> files;
    for_each_record(out.out, [&](std::string_view r) {
        if (r[0] == '@') {
            if (!clock_ns) return;
            const std::string text = trim(r.substr(1));
            if (!parse_mtime(text, *clock_ns)) {
                int64_t seconds = 0;
                number(std::string_view(text).substr(0, text.find('.')), seconds);
                if (seconds > INT64_MAX / 1000000000) throw bad_output();  // past 2262
                *clock_ns = seconds * 1000000000;
            }
            return;
        }
        // "<r|u> <size> <mtime> <ctime> <inode> <path>"
        std::string_view field[5];
        size_t at = 0;
        for (auto& f : field) {
            const size_t sp = r.find(' ', at);
            if (sp == std::string_view::npos) throw bad_output();
            f = r.substr(at, sp - at);
            at = sp + 1;
        }
        RemoteFileInfo info;
        if (field[0] != "r" && field[0] != "u") throw bad_output();
        info.readable = field[0] == "r";
        number(field[1], info.size);
        number(field[4], info.inode);
        if (!parse_mtime(field[2], info.mtime_ns) || !parse_mtime(field[3], info.ctime_ns))
            throw bad_output();
        info.path = strip_dot_slash(r.substr(at));
        files.push_back(std::move(info));
    });
    std::sort(files.begin(), files.end(),
              [](const RemoteFileInfo& a, const RemoteFileInfo& b) { return a.path < b.path; });
    return files;
}

// The command of list_remote_file_info.
std::string info_listing(const std::string& remote_base) {
    return "B=" + shell_quote_path(remote_base) + "; " + kInfoFormats +
           "[ -d \"$B\" ] || exit 0; cd -- \"$B\" && " + kClock + " && LC_ALL=C find . -type f " +
           kInfoPrint;
}

}  // namespace

void list_remote_file_info_ahead(Remote& remote, const std::string& remote_base, bool guess) {
    if (guess)
        remote.run_ahead_on_guess(info_listing(remote_base), {});
    else
        remote.run_ahead(info_listing(remote_base), {});
}

std::vector<RemoteFileInfo> list_remote_file_info(Remote& remote, const std::string& remote_base,
                                                  int64_t* clock_ns,
                                                  std::vector<std::string>* unlisted) {
    const RemoteOutput out = remote.run(info_listing(remote_base));
    if (out.exit_status != 0) {
        // Entries find could not read (an unreadable dir, one removed while it walked) are
        // left out and named; anything else is the listing's failure.
        std::vector<std::string> lines;
        size_t start = 0;
        while (start < out.err.size()) {
            size_t end = out.err.find('\n', start);
            if (end == std::string::npos) end = out.err.size();
            if (end > start) lines.push_back(out.err.substr(start, end - start));
            start = end + 1;
        }
        const bool listed = out.out.size() > 0 && out.out[0] == '@';
        if (!listed || lines.empty() || !unlisted ||
            !std::all_of(lines.begin(), lines.end(), entry_error))
            throw remote_failure(remote, "listing " + remote_base, out.exit_status, out.err);
        unlisted->insert(unlisted->end(), lines.begin(), lines.end());
    }
    return parse_file_info(remote, remote_base, out, clock_ns);
}

namespace {

// The command and stdin of stat_remote_files. The names go NUL-separated on stdin, each as
// ./name so none reads as a find option; missing ones are simply not printed. The input is
// drained even without a base dir.
std::pair<std::string, std::string> stat_request(const std::string& remote_base,
                                                 const std::vector<std::string>& paths) {
    std::string input;
    for (const auto& p : paths) input += "./" + p + '\0';
    return {"B=" + shell_quote_path(remote_base) + "; " + kInfoFormats +
                "cd -- \"$B\" 2>/dev/null || { cat >/dev/null; exit 0; }; " + kClock + "; " +
                find_each_named(kInfoPrint),
            input};
}

}  // namespace

std::string transfer_detail::find_each_named(const std::string& print) {
    return "xargs -0 -r sh -c 'find \"$@\" -maxdepth 0 -type f " + print +
           " 2>/dev/null; exit 0' sh";
}

std::vector<RemoteFileInfo> stat_remote_files(Remote& remote, const std::string& remote_base,
                                              const std::vector<std::string>& paths,
                                              int64_t* clock_ns) {
    if (clock_ns) *clock_ns = 0;
    if (paths.empty()) return {};
    const auto [command, input] = stat_request(remote_base, paths);
    const RemoteOutput out = remote.run(command, input);
    if (out.exit_status != 0)
        throw remote_failure(remote, "listing " + remote_base, out.exit_status, out.err);
    return parse_file_info(remote, remote_base, out, clock_ns);
}

void stat_remote_files_ahead(Remote& remote, const std::string& remote_base,
                             const std::vector<std::string>& paths, bool guess) {
    if (paths.empty()) return;
    auto [command, input] = stat_request(remote_base, paths);
    if (guess)
        remote.run_ahead_on_guess(command, std::move(input));
    else
        remote.run_ahead(command, std::move(input));
}

}  // namespace mlt
