#pragma once
// A Remote that runs commands on this machine with `sh -c`, with the real shell, tar and
// coreutils: unit tests of the job and transfer logic use it instead of an SSH server.

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <stdexcept>
#include <string>
#include <vector>

#include "mlt/ssh/remote.h"

namespace mlt::test {

class LocalRemote : public Remote {
  public:
    const std::string& name() const override { return name_; }

    RemoteOutput run(const std::string& command, std::string_view input = {}) override {
        RemoteOutput out;
        out.exit_status = stream(
            command, input_from(input), [&](std::string_view d) { out.out.append(d); },
            [&](std::string_view d) { out.err.append(d); });
        return out;
    }

    int stream(const std::string& command, const InputSource& input, const OutputSink& on_stdout,
               const OutputSink& on_stderr) override {
        ++commands_run;
        commands.push_back(command);
        int in[2], out[2], err[2];
        if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC))
            throw std::runtime_error("pipe failed");
        pid_t pid = ::fork();
        if (pid == 0) {
            ::dup2(in[0], 0);
            ::dup2(out[1], 1);
            ::dup2(err[1], 2);
            ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
        ::close(in[0]);
        ::close(out[1]);
        ::close(err[1]);
        // Feed stdin on its own, like the SSH session does, then drain both outputs.
        std::vector<char> buf(64 * 1024);
        std::signal(SIGPIPE, SIG_IGN);
        if (input) {
            for (size_t n; (n = input(buf.data(), buf.size())) > 0;) {
                size_t done = 0;
                while (done < n) {
                    ssize_t w = ::write(in[1], buf.data() + done, n - done);
                    if (w < 0 && errno == EINTR) continue;
                    if (w <= 0) break;
                    done += static_cast<size_t>(w);
                }
                if (done < n) break;  // the command stopped reading
            }
        }
        ::close(in[1]);
        pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
        int open_fds = 2;
        try {
            while (open_fds > 0) {
                const int ready = ::poll(fds, 2, 30000);
                if (ready < 0 && errno == EINTR) continue;
                if (ready <= 0) break;
                for (int i = 0; i < 2; ++i) {
                    if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
                    ssize_t r = ::read(fds[i].fd, buf.data(), buf.size());
                    if (r < 0 && errno == EINTR) continue;
                    if (r <= 0) {
                        ::close(fds[i].fd);
                        fds[i].fd = -1;
                        --open_fds;
                    } else {
                        const auto& sink = i == 0 ? on_stdout : on_stderr;
                        if (sink) sink(std::string_view(buf.data(), static_cast<size_t>(r)));
                    }
                }
            }
        } catch (...) {
            // A sink that throws (a simulated lost link) ends the command as a cut channel
            // would: no leaked pipes, no child left blocked on a full one.
            for (auto& f : fds)
                if (f.fd >= 0) ::close(f.fd);
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
            throw;
        }
        for (auto& f : fds)
            if (f.fd >= 0) ::close(f.fd);
        int status = 0;
        ::waitpid(pid, &status, 0);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

    int commands_run = 0;
    std::vector<std::string> commands;  // every command, in order

  private:
    std::string name_ = "local";
};

}  // namespace mlt::test
