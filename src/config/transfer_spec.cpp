// MLTK's path rules for upload_files/download_files entries, and the local and remote paths
// of the settings.
#include <string>

#include "mlt/config/settings.h"
#include "mlt/util/error.h"
#include "mlt/util/paths.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

bool has_dotdot_component(std::string_view path) {
    size_t start = 0;
    while (start <= path.size()) {
        size_t slash = path.find('/', start);
        size_t end = slash == std::string_view::npos ? path.size() : slash;
        if (path.substr(start, end - start) == "..") return true;
        if (slash == std::string_view::npos) break;
        start = slash + 1;
    }
    return false;
}

}  // namespace

TransferSpec parse_transfer_spec(const std::string& entry, TransferDirection direction) {
    const bool upload = direction == TransferDirection::upload;
    const std::string key = upload ? "upload_files" : "download_files";
    const std::string quoted = key + " entry '" + entry + "'";
    const std::string base = upload ? "the model spec's directory" : "the remote directory";

    size_t bar = entry.find('|');
    if (bar == std::string::npos) {
        // `a | b` is almost certainly meant as `a|b`; a file name with leading or trailing
        // blanks is not worth the surprise.
        std::string glob = trim(entry);
        if (glob.empty()) throw config_error(key + " has an empty entry", "remove it");
        // Without `|` the same relative path is used on both sides, so an absolute path or
        // one escaping the base directory would name a different place on each machine.
        if (glob[0] == '/' || glob[0] == '~')
            throw config_error(
                quoted + " is absolute; without '|' a path is a glob relative to " + base,
                upload ? "write 'from|to' to name both sides, e.g. '~/data.csv|data.csv'"
                       : "write 'from|to' to name both sides, e.g. '/tmp/out.txt|out.txt'");
        // Uploads may reach above the spec dir, as in MLTK (the same path above the remote dir).
        if (!upload && has_dotdot_component(glob))
            throw config_error(
                quoted + " contains '..'; without '|' a path must stay inside " + base,
                "write 'from|to' to name both sides");
        return TransferSpec{glob, glob, true};
    }

    if (entry.find('|', bar + 1) != std::string::npos)
        throw config_error(quoted + " has more than one '|'", "write exactly one: 'from|to'");
    std::string from = trim(std::string_view(entry).substr(0, bar));
    std::string to = trim(std::string_view(entry).substr(bar + 1));
    if (from.empty() || to.empty())
        throw config_error(quoted + " has an empty side of '|'", "write 'from|to'");
    // A `*` would leave the destination of each match undefined (MLTK's rule); `?` and `[`
    // are plain characters of a file name here, as in MLTK.
    if (from.find('*') != std::string::npos || to.find('*') != std::string::npos)
        throw config_error(quoted + " uses the wildcard * together with '|'",
                           "use 'from|to' for one file or directory, or a glob without '|'");
    return TransferSpec{from, to, false};
}

std::string remote_path_in(const std::string& remote_dir, const std::string& path) {
    // A path that starts with a variable (`$HOME/x`, `${WORK}/x`) names its own place.
    if (!path.empty() && (path[0] == '/' || path[0] == '~' || path[0] == '$')) return path;
    return remote_dir + "/" + path;
}

std::string local_path_in(const std::string& base, const std::string& path) {
    std::string p = expand_user(path);
    return (!p.empty() && p[0] == '/') ? p : base + "/" + p;
}

}  // namespace mlt
