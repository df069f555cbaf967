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

std::string mltk_dir() {
    if (const char* d = std::getenv("MLTK_CACHE_DIR"); d && *d) return d;
    return home_dir() + "/.mltk";
}

void write_file_atomic(const std::string& path, std::string_view data, unsigned mode) {
    std::string tmp = path + ".mlt-tmp-" + std::to_string(getpid());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) throw io_error("cannot write " + tmp + ": " + std::strerror(errno));
    // open() applies the umask; the caller's mode is the contract (0600 keys stay 0600,
    // and a 0644 public key is not narrowed by a strict umask).
    bool ok = ::fchmod(fd, mode) == 0;
    const char* p = data.data();
    size_t left = data.size();
    while (ok && left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) ok = false;
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
