#include "harness/laptop_snapshot.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "mlt/util/sha256.h"

namespace mlt_test {
namespace {

// Files bigger than this are told apart by size and mtime only (a 100 GiB partial must not
// take minutes to hash).
constexpr std::uint64_t kHashLimit = 256ull * 1024 * 1024;

// The sha256 of a regular file (opened without following a link), "unreadable" when it
// cannot be read.
std::string digest_of(const std::string& path, const struct stat& st) {
    if (static_cast<std::uint64_t>(st.st_size) > kHashLimit)
        return "mtime " + std::to_string(st.st_mtim.tv_sec) + "." +
               std::to_string(st.st_mtim.tv_nsec);
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return "unreadable";
    mlt::Sha256 hash;
    std::vector<char> buf(1 << 20);
    for (;;) {
        const ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        hash.update(buf.data(), static_cast<size_t>(n));
    }
    ::close(fd);
    return hash.hex_digest();
}

FileState state_of(const std::string& path, const struct stat& st) {
    FileState s;
    s.mode = static_cast<int>(st.st_mode & 07777);
    if (S_ISREG(st.st_mode)) {
        s.type = 'f';
        s.size = static_cast<std::uint64_t>(st.st_size);
        s.digest = digest_of(path, st);
    } else if (S_ISDIR(st.st_mode)) {
        s.type = 'd';
    } else if (S_ISLNK(st.st_mode)) {
        s.type = 'l';
        char buf[PATH_MAX];
        const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
        if (n > 0) s.target.assign(buf, static_cast<size_t>(n));
    } else {
        s.type = 'o';
    }
    return s;
}

std::string octal(int mode) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04o", mode);
    return buf;
}

}  // namespace

std::string FileState::describe() const {
    switch (type) {
        case 'f':
            return "file " + std::to_string(size) + " bytes " + octal(mode) + " " +
                   digest.substr(0, 16);
        case 'd':
            return "dir " + octal(mode);
        case 'l':
            return "symlink -> " + target;
        default:
            return "special " + octal(mode);
    }
}

LaptopSnapshot LaptopSnapshot::take(const std::vector<std::string>& roots,
                                    const std::vector<std::string>& allowed) {
    LaptopSnapshot s;
    s.roots_ = roots;
    s.allowed_ = allowed;
    for (const auto& root : roots) s.walk(root);
    return s;
}

bool LaptopSnapshot::is_allowed(const std::string& path) const {
    for (const auto& a : allowed_) {
        if (!a.empty() && a.back() == '*') {
            if (path.compare(0, a.size() - 1, a, 0, a.size() - 1) == 0) return true;
            continue;
        }
        if (path == a) return true;
        if (path.size() > a.size() && path.compare(0, a.size(), a) == 0 && path[a.size()] == '/')
            return true;
    }
    return false;
}

bool LaptopSnapshot::leads_to_allowed(const std::string& path) const {
    for (const auto& a : allowed_)
        if (a.size() > path.size() && a.compare(0, path.size(), path) == 0 && a[path.size()] == '/')
            return true;
    return false;
}

void LaptopSnapshot::walk(const std::string& path) {
    if (is_allowed(path)) return;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return;
    // A directory on the way to an allowed path (~/.mltk/models) is mlt's to create; what
    // else lies in it is recorded.
    if (!S_ISDIR(st.st_mode) || !leads_to_allowed(path)) entries_[path] = state_of(path, st);
    if (!S_ISDIR(st.st_mode)) return;
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) return;
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(dir)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(dir);
    for (const auto& name : names) walk(path + "/" + name);
}

::testing::AssertionResult nothing_changed(const LaptopSnapshot& before,
                                           const LaptopSnapshot& after) {
    std::string report;
    const auto& a = before.entries();
    const auto& b = after.entries();
    for (const auto& [path, state] : a) {
        auto it = b.find(path);
        if (it == b.end())
            report += "  vanished: " + path + " (was " + state.describe() + ")\n";
        else if (it->second != state)
            report += "  changed:  " + path + " (" + state.describe() + " -> " +
                      it->second.describe() + ")\n";
    }
    for (const auto& [path, state] : b)
        if (!a.count(path)) report += "  appeared: " + path + " (" + state.describe() + ")\n";
    if (report.empty()) return ::testing::AssertionSuccess();
    std::string allowed;
    for (const auto& p : before.allowed()) allowed += "  " + p + "\n";
    return ::testing::AssertionFailure() << "the laptop side changed outside the model's dirs:\n"
                                         << report << "(allowed to change:\n"
                                         << allowed << ")";
}

}  // namespace mlt_test
