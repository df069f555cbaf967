// Listing remote files in one round trip, NUL-separated so any name survives.

#include <algorithm>
#include <cstdint>
#include <set>

#include "commands.h"
#include "internal.h"
#include "mlt/util/bounded.h"
#include "mlt/util/remote_name.h"
#include "mlt/util/shell.h"
#include "remote_scripts.h"

namespace mlt {

using namespace transfer_detail;

namespace {

std::string strip_dot_slash(std::string_view name) {
    while (name.substr(0, 2) == "./") name.remove_prefix(2);
    return std::string(name);
}

// A listing never holds more files than this: a host that sends more is not listing a log
// dir, and the records of a million files already take a few hundred MB here.
constexpr size_t kMaxListedFiles = 1000000;

// Runs a listing command and calls `each` with every NUL-terminated record of its stdout as
// it streams in: at most one record (kMaxRemoteName and some fields) is held at a time, so a
// listing of any length takes bounded memory here, and a record too long to be a name (or
// more than kMaxListedFiles of them) ends it as tampered. The tail of stderr (where find's own
// complaint is) goes to `err`.
template <typename Each>
int stream_records(Remote& remote, const std::string& what, const std::string& command,
                   std::string_view input, std::string& err, Each each) {
    constexpr size_t kMaxRecord = kMaxRemoteName + 200;
    std::string record;
    size_t count = 0;
    auto on_stdout = [&](std::string_view d) {
        while (!d.empty()) {
            const size_t end = d.find('\0');
            const size_t n = end == std::string_view::npos ? d.size() : end;
            if (record.size() + n > kMaxRecord)
                throw tampered_error(
                    what, "a record longer than " + std::to_string(kMaxRecord) + " bytes");
            record.append(d.substr(0, n));
            if (end == std::string_view::npos) return;
            d.remove_prefix(end + 1);
            if (record.empty()) continue;
            if (++count > kMaxListedFiles)
                throw tampered_error(what,
                                     "more than " + std::to_string(kMaxListedFiles) + " records");
            each(std::string_view(record));
            record.clear();
        }
    };
    BoundedTail said;
    const int status = remote.stream(command, input_from(input), on_stdout, said.sink());
    err = said.str();
    // A last record without its NUL: the command was cut off, or lies; it counts as one.
    if (!record.empty()) each(std::string_view(record));
    return status;
}

// "the listing of BASE on HOST", for messages.
std::string listing_of(const Remote& remote, const std::string& remote_base) {
    return "the listing of " + remote_base + " on " + remote.name();
}

}  // namespace

namespace transfer_detail {

std::string list_files_command(const std::string& remote_base) {
    return shell_assignment("B", shell_quote_path(remote_base)) +
           std::string(scripts::transfer_list_files);
}

std::string list_info_command(const std::string& remote_base) {
    return shell_assignment("B", shell_quote_path(remote_base)) +
           std::string(scripts::transfer_list_info);
}

std::string stat_files_command(const std::string& remote_base) {
    return shell_assignment("B", shell_quote_path(remote_base)) +
           shell_assignment("s", shell_quote(scripts::transfer_find_named)) +
           std::string(scripts::transfer_stat_files);
}

}  // namespace transfer_detail

int stream_remote_records(Remote& remote, const std::string& what, const std::string& command,
                          std::string& err, const std::function<void(std::string_view)>& each) {
    return stream_records(remote, what, command, {}, err, each);
}

std::vector<std::string> list_remote_files(Remote& remote, const std::string& remote_base) {
    const std::string what = listing_of(remote, remote_base);
    std::vector<std::string> files;
    std::string err;
    const int status = stream_records(remote, what, list_files_command(remote_base), {}, err,
                                      [&](std::string_view r) {
                                          files.push_back(strip_dot_slash(r));
                                          check_remote_name(files.back(), what);
                                      });
    if (status != 0) throw remote_failure(remote, "listing " + remote_base, status, err);
    std::sort(files.begin(), files.end());
    const auto twice = std::adjacent_find(files.begin(), files.end());
    if (twice != files.end())
        throw tampered_error(what, "'" + printable(*twice, 200) + "' listed twice");
    return files;
}

namespace {

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

// Reads the records of list_info.sh and stat_files.sh, one at a time, into infos whose names
// passed the gate; sorted() then orders them and refuses a name listed twice.
class InfoParser {
  public:
    // With `asked`, only those names are kept (they are ours, and need no gate); without, every
    // name goes through the gate.
    InfoParser(Remote& remote, const std::string& remote_base, int64_t* clock_ns,
               const std::set<std::string>* asked = nullptr)
        : remote_(remote),
          base_(remote_base),
          what_(listing_of(remote, remote_base)),
          clock_ns_(clock_ns),
          asked_(asked) {
        if (clock_ns_) *clock_ns_ = 0;
    }

    const std::string& what() const { return what_; }

    void operator()(std::string_view r) {
        if (r[0] == '@') {
            clock(trim(r.substr(1)));
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
        if (asked_ && asked_->count(info.path) == 0) return;  // not this listing's to say
        if (!asked_) check_remote_name(info.path, what_);
        files_.push_back(std::move(info));
    }

    std::vector<RemoteFileInfo> sorted() {
        auto by_path = [](const RemoteFileInfo& a, const RemoteFileInfo& b) {
            return a.path < b.path;
        };
        std::sort(files_.begin(), files_.end(), by_path);
        const auto twice = std::adjacent_find(
            files_.begin(), files_.end(),
            [](const RemoteFileInfo& a, const RemoteFileInfo& b) { return a.path == b.path; });
        if (twice != files_.end())
            throw tampered_error(what_, "'" + printable(twice->path, 200) + "' listed twice");
        return std::move(files_);
    }

  private:
    Error bad_output() const {
        return remote_error(
            "listing " + base_ + " on " + remote_.name() + " gave unexpected output",
            "the remote needs GNU find (findutils)");
    }

    template <typename Value>
    void number(std::string_view text, Value& value) const {
        // 18 digits at most: more would wrap (no file or inode number is that large).
        if (text.empty() || text.size() > 18) throw bad_output();
        value = 0;
        for (char c : text) {
            if (c < '0' || c > '9') throw bad_output();
            value = value * 10 + static_cast<Value>(c - '0');
        }
    }

    void clock(const std::string& text) {
        if (!clock_ns_ || parse_mtime(text, *clock_ns_)) return;
        int64_t seconds = 0;
        number(std::string_view(text).substr(0, text.find('.')), seconds);
        if (seconds > INT64_MAX / 1000000000) throw bad_output();  // past 2262
        *clock_ns_ = seconds * 1000000000;
    }

    Remote& remote_;
    const std::string& base_;
    const std::string what_;
    int64_t* clock_ns_;
    const std::set<std::string>* asked_;
    std::vector<RemoteFileInfo> files_;
};

}  // namespace

void list_remote_file_info_ahead(Remote& remote, const std::string& remote_base, bool guess) {
    if (guess)
        remote.run_ahead_on_guess(list_info_command(remote_base), {});
    else
        remote.run_ahead(list_info_command(remote_base), {});
}

std::vector<RemoteFileInfo> list_remote_file_info(Remote& remote, const std::string& remote_base,
                                                  int64_t* clock_ns,
                                                  std::vector<std::string>* unlisted) {
    InfoParser parser(remote, remote_base, clock_ns);
    std::string err;
    bool listed = false;  // the clock record came: find ran
    const int status = stream_records(remote, parser.what(), list_info_command(remote_base), {},
                                      err, [&](std::string_view r) {
                                          listed = listed || r[0] == '@';
                                          parser(r);
                                      });
    if (status != 0) {
        // Entries find could not read (an unreadable dir, one removed while it walked) are
        // left out and named; anything else is the listing's failure.
        std::vector<std::string> lines;
        size_t start = 0;
        while (start < err.size()) {
            size_t end = err.find('\n', start);
            if (end == std::string::npos) end = err.size();
            if (end > start) lines.push_back(err.substr(start, end - start));
            start = end + 1;
        }
        if (!listed || lines.empty() || !unlisted ||
            !std::all_of(lines.begin(), lines.end(), entry_error))
            throw remote_failure(remote, "listing " + remote_base, status, err);
        for (auto& line : lines) unlisted->push_back(printable(line, 300));
    }
    return parser.sorted();
}

namespace {

// The stdin of stat_files_command: each name as ./name (so none reads as a find option),
// NUL-terminated.
std::string stat_input(const std::vector<std::string>& paths) {
    std::string input;
    for (const auto& p : paths) input += "./" + p + '\0';
    return input;
}

}  // namespace

std::vector<RemoteFileInfo> stat_remote_files(Remote& remote, const std::string& remote_base,
                                              const std::vector<std::string>& paths,
                                              int64_t* clock_ns) {
    if (clock_ns) *clock_ns = 0;
    if (paths.empty()) return {};
    const std::string command = stat_files_command(remote_base);
    const std::string input = stat_input(paths);
    const std::set<std::string> asked(paths.begin(), paths.end());
    InfoParser parser(remote, remote_base, clock_ns, &asked);
    std::string err;
    const int status = stream_records(remote, parser.what(), command, input, err,
                                      [&](std::string_view r) { parser(r); });
    if (status != 0) throw remote_failure(remote, "listing " + remote_base, status, err);
    return parser.sorted();
}

void stat_remote_files_ahead(Remote& remote, const std::string& remote_base,
                             const std::vector<std::string>& paths, bool guess) {
    if (paths.empty()) return;
    const std::string command = stat_files_command(remote_base);
    if (guess)
        remote.run_ahead_on_guess(command, stat_input(paths));
    else
        remote.run_ahead(command, stat_input(paths));
}

}  // namespace mlt
