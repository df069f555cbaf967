// Listing remote files in one round trip, NUL-separated so any name survives.

#include <algorithm>

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

// Parses `find -printf '%s %T@ %p\0'` output into sorted infos.
static std::vector<RemoteFileInfo> parse_file_info(Remote& remote, const std::string& remote_base,
                                            const RemoteOutput& out) {
    if (out.exit_status != 0)
        throw remote_failure(remote, "listing " + remote_base, out.exit_status, out.err);
    auto bad_output = [&] {
        return remote_error(
            "listing " + remote_base + " on " + remote.name() + " gave unexpected output",
            "the remote needs GNU find (findutils)");
    };
    std::vector<RemoteFileInfo> files;
    for_each_record(out.out, [&](std::string_view r) {
        // "<size> <mtime> <path>": the path is last, so spaces in it are harmless.
        size_t s1 = r.find(' ');
        size_t s2 = s1 == std::string_view::npos ? s1 : r.find(' ', s1 + 1);
        RemoteFileInfo info;
        if (s2 == std::string_view::npos ||
            !parse_mtime(r.substr(s1 + 1, s2 - s1 - 1), info.mtime_ns))
            throw bad_output();
        for (char c : r.substr(0, s1)) {
            if (c < '0' || c > '9') throw bad_output();
            info.size = info.size * 10 + static_cast<uint64_t>(c - '0');
        }
        info.path = strip_dot_slash(r.substr(s2 + 1));
        files.push_back(std::move(info));
    });
    std::sort(files.begin(), files.end(),
              [](const RemoteFileInfo& a, const RemoteFileInfo& b) { return a.path < b.path; });
    return files;
}

std::vector<RemoteFileInfo> list_remote_file_info(Remote& remote, const std::string& remote_base) {
    return parse_file_info(remote, remote_base,
                           remote.run(list_command(remote_base, "-printf '%s %T@ %p\\0'")));
}

std::vector<RemoteFileInfo> stat_remote_files(Remote& remote, const std::string& remote_base,
                                              const std::vector<std::string>& paths) {
    if (paths.empty()) return {};
    // The names go NUL-separated on stdin, each as ./name so none reads as a find option;
    // missing ones are simply not printed. The input is drained even without a base dir.
    std::string input;
    for (const auto& p : paths) input += "./" + p + '\0';
    const std::string command =
        "B=" + shell_quote_path(remote_base) +
        "; cd -- \"$B\" 2>/dev/null || { cat >/dev/null; exit 0; }; xargs -0 -r sh -c "
        "'find \"$@\" -maxdepth 0 -type f -printf \"%s %T@ %p\\0\" 2>/dev/null; exit 0' sh";
    return parse_file_info(remote, remote_base, remote.run(command, input));
}

}  // namespace mlt
