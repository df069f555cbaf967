// Paths: home, `~` and $VAR expanded, MLTK's dir, atomic file writes, files read whole.
#include "mlt/util/paths.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "mlt/util/error.h"

namespace mlt {

std::string home_dir() {
    if (const char* h = std::getenv("HOME"); h && *h) return h;
    if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir && *pw->pw_dir) return pw->pw_dir;
    throw io_error("cannot find the home directory", "set HOME");
}

std::string expand_user(std::string_view path) {
    if (path == "~") return home_dir();
    if (path.substr(0, 2) == "~/") return home_dir() + std::string(path.substr(1));
    return std::string(path);
}

namespace {

bool is_name_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) {
    return is_name_start(c) || (c >= '0' && c <= '9');
}

}  // namespace

std::vector<PathPiece> split_variable_references(std::string_view path) {
    std::vector<PathPiece> pieces;
    const auto add_text = [&](std::string_view t) {
        if (t.empty()) return;
        if (pieces.empty() || pieces.back().variable)
            pieces.push_back({std::string(t), false});
        else
            pieces.back().text += t;
    };
    size_t i = 0;
    while (i < path.size()) {
        const size_t dollar = path.find('$', i);
        if (dollar == std::string_view::npos) {
            add_text(path.substr(i));
            break;
        }
        add_text(path.substr(i, dollar - i));
        const bool braced = dollar + 1 < path.size() && path[dollar + 1] == '{';
        size_t start = dollar + (braced ? 2 : 1);
        size_t end = start;
        if (end < path.size() && is_name_start(path[end]))
            while (end < path.size() && is_name_char(path[end])) ++end;
        const bool closed = !braced || (end < path.size() && path[end] == '}');
        if (end == start || !closed) {
            add_text("$");
            i = dollar + 1;
            continue;
        }
        pieces.push_back({std::string(path.substr(start, end - start)), true});
        i = end + (braced ? 1 : 0);
    }
    return pieces;
}

std::string expand_env_vars(std::string_view path) {
    std::string out;
    for (const auto& piece : split_variable_references(path)) {
        const char* value = piece.variable ? std::getenv(piece.text.c_str()) : nullptr;
        if (!piece.variable)
            out += piece.text;
        else if (value)
            out += value;
        else
            out += "${" + piece.text + "}";
    }
    return out;
}

std::string mltk_dir() {
    if (const char* d = std::getenv("MLTK_CACHE_DIR"); d && *d) return d;
    return home_dir() + "/.mltk";
}

void write_file_atomic(const std::string& path, std::string_view data, unsigned mode) {
    std::string tmp = path + ".mlt-tmp-" + std::to_string(getpid());
    // The name is predictable: whatever is there (a stale file, a planted symlink) is
    // replaced, never written through.
    ::unlink(tmp.c_str());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) throw io_error("cannot write " + tmp + ": " + std::strerror(errno));
    // open() applies the umask; the caller's mode is the contract (0600 keys stay 0600,
    // and a 0644 public key is not narrowed by a strict umask).
    bool ok = ::fchmod(fd, mode) == 0;
    const char* p = data.data();
    size_t left = data.size();
    while (ok && left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            ok = false;
        else {
            p += n;
            left -= static_cast<size_t>(n);
        }
    }
    ok = ok && ::fsync(fd) == 0;
    int saved = errno;
    ok = (::close(fd) == 0) && ok;
    if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
        if (ok) saved = errno;
        ::unlink(tmp.c_str());
        throw io_error("cannot write " + path + ": " + std::strerror(saved));
    }
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw io_error("cannot read " + path + ": " + std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace mlt
