// File descriptors as RAII handles.
#include "mlt/util/fd.h"

#include <unistd.h>

namespace mlt {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
        reset();
        fd_ = other.release();
    }
    return *this;
}

int UniqueFd::release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
}

int UniqueFd::reset() {
    if (fd_ < 0) return 0;
    int r = ::close(fd_);
    fd_ = -1;
    return r;
}

}  // namespace mlt
