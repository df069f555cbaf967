// Local state of a model: its lock against a second mlt, and the console log's local copy.
#include "mlt/train/local/local_state.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "mlt/util/error.h"
#include "mlt/util/paths.h"

namespace mlt {

namespace {

void make_dirs(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw io_error("cannot create " + dir + ": " + ec.message());
}

std::string read_small(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return {};
    char buf[256];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    std::string text = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
}

}  // namespace

Error own_file_error(const std::string& path, int error) {
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
        return io_error(path +
                            " is a symlink; mlt keeps its own files as plain files and "
                            "never writes through a link",
                        "remove the link; mlt creates the file again");
    return io_error("cannot write " + path + ": " + std::strerror(error));
}

void check_own_file(const std::string& path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) throw own_file_error(path, ELOOP);
}

std::string local_state_dir(const std::string& model) {
    return mltk_dir() + "/ssh/models/" + model;
}

LocalModelLock::LocalModelLock(const std::string& state_dir, const std::string& model) {
    make_dirs(state_dir);
    const std::string path = state_dir + "/lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0) throw own_file_error(path, errno);
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const std::string holder = read_small(path);
        ::close(fd_);
        fd_ = -1;
        throw Error(ErrorKind::conflict,
                    "another mlt on this machine is working on " + model +
                        (holder.empty() ? std::string() : " (" + holder + ")"),
                    "wait for it to end, or stop it; one mlt per model keeps its local "
                    "console log and results from being written twice");
    }
    const std::string me = "pid " + std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) < 0) {
        // Only the message of a refused second mlt would lack the pid; the lock holds.
    }
}

LocalModelLock::~LocalModelLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the flock
}

LocalConsole::LocalConsole(std::string path, std::string state_dir)
    : path_(std::move(path)), state_dir_(std::move(state_dir)) {}

LocalConsole::~LocalConsole() {
    if (fd_ >= 0) ::close(fd_);
}

std::pair<std::string, uint64_t> LocalConsole::copy_of() const {
    struct stat st {};
    if (::lstat(path_.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {"", 0};
    return {read_small(state_dir_ + "/console_run"), static_cast<uint64_t>(st.st_size)};
}

uint64_t LocalConsole::open(const std::string& run_id) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    make_dirs(state_dir_);
    make_dirs(std::filesystem::path(path_).parent_path().string());
    const std::string tag = state_dir_ + "/console_run";
    // An old mlt's job has no run id: "" stands for it, so entering its follow again does
    // not empty the copy each time.
    const bool same_run = read_small(tag) == run_id;
    int flags = O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC;
    if (!same_run) flags |= O_TRUNC;
    fd_ = ::open(path_.c_str(), flags, 0644);
    if (fd_ < 0) throw own_file_error(path_, errno);
    // Tagged after the copy is emptied: a kill in between leaves an empty copy of no run,
    // which the next open empties again.
    if (!same_run) {
        check_own_file(tag);
        write_file_atomic(tag, run_id + "\n", 0644);
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0)
        throw io_error("cannot read " + path_ + ": " + std::strerror(errno));
    return static_cast<uint64_t>(st.st_size);
}

void LocalConsole::append(std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw io_error("cannot write " + path_ + ": " + std::strerror(errno));
        bytes.remove_prefix(static_cast<size_t>(n));
    }
}

}  // namespace mlt
