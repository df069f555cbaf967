#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "mlt/util/error.h"

namespace mlt {

// mlt's own local files (the console copy, its run tag, the local lock, the history) are
// opened with O_NOFOLLOW and never written through a symlink: a symlink in their place is an
// error that says so. own_file_error: the io error for `path`, which could not be opened
// with errno `error`; check_own_file: throws it when `path` is a symlink (checked before
// anything remote, so the run does not stop after its job started).
Error own_file_error(const std::string& path, int error);
void check_own_file(const std::string& path);

// `<mltk dir>/ssh/models/<model>`: mlt's own bookkeeping of a model on this machine (the
// local lock, which run the local console copy belongs to).
std::string local_state_dir(const std::string& model);

// While it lives, no other mlt on this machine works on the model's local files (console
// log copy, log dir, archive): two of them would write the same console copy twice. An
// flock(2), so a killed mlt leaves no stale lock.
class LocalModelLock {
  public:
    // Takes the lock in `state_dir` (created if missing). Throws mlt::Error (conflict, exit 3)
    // naming the process that holds it, (io) when it cannot be created.
    LocalModelLock(const std::string& state_dir, const std::string& model);
    ~LocalModelLock();
    LocalModelLock(const LocalModelLock&) = delete;
    LocalModelLock& operator=(const LocalModelLock&) = delete;

  private:
    int fd_ = -1;
};

// The local copy of a run's console log. Its size is where the next read of the remote log
// starts, so no byte is shown twice or lost across reconnects and --resume. It belongs to
// one run: `<state dir>/console_run` names it, and a copy of another run is emptied first.
// Opened without following symlinks.
class LocalConsole {
  public:
    LocalConsole(std::string path, std::string state_dir);
    ~LocalConsole();
    LocalConsole(const LocalConsole&) = delete;
    LocalConsole& operator=(const LocalConsole&) = delete;

    // Makes the copy run `run_id`'s (emptying another run's) and returns its size. Throws
    // mlt::Error (io) when it cannot be written.
    uint64_t open(const std::string& run_id);
    // The run the copy is of ("" when none is known) and its size: what open() of that run
    // would return. Changes nothing.
    std::pair<std::string, uint64_t> copy_of() const;
    // Appends bytes of the remote log (after open()). Throws mlt::Error (io).
    void append(std::string_view bytes);

  private:
    std::string path_;
    std::string state_dir_;
    int fd_ = -1;
};

}  // namespace mlt
