#pragma once
// A Remote that runs commands on this machine with `sh -c`, with the real shell, tar and
// coreutils: unit tests of the job and transfer logic use it instead of an SSH server. The
// shell is /bin/sh, or one of the shells a host may have as sh (dash, BusyBox's), for the
// tests that run the job protocol under each.

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "mlt/ssh/remote.h"

extern char** environ;

namespace mlt::test {

// The shell a LocalRemote runs its commands with: `argv` before `-c COMMAND`, and a dir put
// first on PATH (empty: none) whose `sh` is that shell, so that the `sh` a command starts
// (the detached job, its sweeper) is the same shell.
struct LocalShell {
    std::string name;
    std::vector<std::string> argv;
    std::string path_dir;
};

// The host's /bin/sh.
inline LocalShell system_shell() {
    return {"sh", {"/bin/sh"}, ""};
}

// A shell found on PATH as `program` (then `args`), with a dir of its own where `sh` (and
// each of `applets`) runs it (under HOME, which the unit tests make a temporary dir). A
// missing program gives a shell that cannot start: the tests that use it fail.
inline LocalShell shell_on_path(const std::string& name, const std::string& program,
                                const std::vector<std::string>& args,
                                const std::vector<std::string>& applets = {}) {
    std::string found = program;
    if (const char* path = std::getenv("PATH")) {
        std::string dirs = path;
        for (size_t start = 0; start <= dirs.size();) {
            size_t end = dirs.find(':', start);
            if (end == std::string::npos) end = dirs.size();
            const std::string candidate = dirs.substr(start, end - start) + "/" + program;
            if (end > start && ::access(candidate.c_str(), X_OK) == 0) {
                found = candidate;
                break;
            }
            start = end + 1;
        }
    }
    const char* home = std::getenv("HOME");
    const std::string dir = std::string(home ? home : "/tmp") + "/.mlt-test-shells/" + name;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    // A link named sh: BusyBox picks its applet by the name it was started as.
    std::vector<std::string> links{"sh"};
    links.insert(links.end(), applets.begin(), applets.end());
    for (const auto& link : links) {
        const std::string at = dir + "/" + link;
        if (std::filesystem::is_symlink(at, ec)) continue;
        const std::string tmp = at + "." + std::to_string(::getpid());
        std::filesystem::create_symlink(found, tmp, ec);
        std::filesystem::rename(tmp, at, ec);
    }
    std::vector<std::string> argv{found};
    argv.insert(argv.end(), args.begin(), args.end());
    return {name, argv, dir};
}

// The shells the job protocol's tests run under, by name (test parameters are made before
// HOME is the test's): "dash" and BusyBox's sh (with its awk), "busybox".
inline std::vector<std::string> job_shells() {
    return {"dash", "busybox"};
}

// The shell of that name ("sh": the host's /bin/sh).
inline LocalShell local_shell(const std::string& name) {
    if (name == "dash") return shell_on_path("dash", "dash", {});
    // BusyBox's awk too, as on a BusyBox-only host (the scripts' awk is what differs most).
    if (name == "busybox") return shell_on_path("busybox", "busybox", {"sh"}, {"awk"});
    return system_shell();
}

class LocalRemote : public Remote {
  public:
    explicit LocalRemote(LocalShell shell = system_shell()) : shell_(std::move(shell)) {}

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
        // Everything exec needs is made before the fork: the child of a threaded process may
        // only call async-signal-safe functions.
        std::vector<std::string> words = shell_.argv, env_words = environment();
        words.push_back("-c");
        words.push_back(command);
        const std::vector<char*> argv = pointers(words), envp = pointers(env_words);
        int in[2], out[2], err[2];
        if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC))
            throw std::runtime_error("pipe failed");
        pid_t pid = ::fork();
        if (pid == 0) {
            ::dup2(in[0], 0);
            ::dup2(out[1], 1);
            ::dup2(err[1], 2);
            ::execve(argv[0], argv.data(), envp.data());
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
    // This process's environment, with the shell's dir first on PATH.
    std::vector<std::string> environment() const {
        std::vector<std::string> env;
        for (char** e = environ; *e; ++e)
            if (shell_.path_dir.empty() || std::string_view(*e).substr(0, 5) != "PATH=")
                env.emplace_back(*e);
        if (!shell_.path_dir.empty()) {
            const char* path = std::getenv("PATH");
            env.push_back("PATH=" + shell_.path_dir + ":" + (path ? path : "/usr/bin:/bin"));
        }
        return env;
    }
    // `words` as exec takes them, null-terminated.
    static std::vector<char*> pointers(std::vector<std::string>& words) {
        std::vector<char*> out;
        for (auto& w : words) out.push_back(w.data());
        out.push_back(nullptr);
        return out;
    }

    LocalShell shell_;
    std::string name_ = "local";
};

}  // namespace mlt::test
