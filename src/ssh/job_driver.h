#pragma once
// One StreamJob of Session::exec_parallel as its loop drives it: on an exec channel of its
// own (ExecChannel, exec.cpp) or as a streamed frame of the control shell (ShellStream,
// shell_stream.cpp). Private to src/ssh/.

#include <cstdint>
#include <functional>
#include <memory>

#include "channel_io.h"
#include "liveness.h"
#include "mlt/ssh/remote.h"

namespace mlt {
struct ControlShell;
}

namespace mlt::ssh_detail {

class JobDriver {
  public:
    virtual ~JobDriver() = default;
    // The command ended and everything it sent was read.
    virtual bool done() const = 0;
    // A job that names a data stream: held to the floor while it runs.
    virtual bool data() const = 0;
    // Input is still to go.
    virtual bool sending() const = 0;
    virtual int exit_status() const = 0;
    // Sends as much input as the remote window takes; true if anything went.
    virtual bool send() = 0;
    // Reads what output is there (waiting up to `wait_ms` for it); true if anything was read.
    virtual bool receive(ReadBuffer& buf, int wait_ms) = 0;
    // The job did not run here and must go elsewhere (a control shell that cannot stream).
    virtual bool refused() const { return false; }
    // Whether it holds a channel of its own (counted against the server's MaxSessions).
    virtual bool holds_channel() const { return !done(); }
};

// Reports to a StreamJob's on_taken what the server has taken of its input: what was
// written less what is still in flight, the largest window it granted less the window left
// now (sshd grants a fixed window again as it passes input on).
class TakenCount {
  public:
    explicit TakenCount(const std::function<void(uint64_t)>& on_taken) : on_taken_(on_taken) {}
    void wrote(uint64_t n) { written_ += n; }
    // The channel's window now.
    void window(uint32_t window);
    // The command ended: everything written counts as taken.
    void end();

  private:
    const std::function<void(uint64_t)>& on_taken_;
    uint64_t written_ = 0, taken_ = 0, most_window_ = 0;
};

// A streamed frame of `shell` for `job` (its input in chunks after the frame's text); the
// shell must be running with no reply outstanding (usable_for_stream).
std::unique_ptr<JobDriver> shell_stream(ssh_session s, Liveness& live, const std::string& display,
                                        ControlShell& shell, const StreamJob& job,
                                        FloorCheck& floor);
// Whether `shell` can take a streamed frame now: running, nothing sent ahead or unread, and
// its host's `head -c` known to read no further than it writes (not refused before).
bool usable_for_stream(const ControlShell& shell);

}  // namespace mlt::ssh_detail
