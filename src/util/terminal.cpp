// Secrets asked for: through SSH_ASKPASS or the terminal, never echoed, and wiped after use.
#include "mlt/util/terminal.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace mlt {

namespace {

// Runs the askpass program with the prompt as its only argument and returns its first line.
std::optional<std::string> ask_program(const char* program, const std::string& prompt) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
    pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return std::nullopt;
    }
    if (pid == 0) {
        ::dup2(fds[1], STDOUT_FILENO);
        ::execlp(program, program, prompt.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(fds[1]);
    std::string answer;
    char buf[256];
    for (;;) {
        ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        answer.append(buf, static_cast<size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        wipe(answer);
        return std::nullopt;
    }
    if (auto nl = answer.find('\n'); nl != std::string::npos) answer.resize(nl);
    if (!answer.empty() && answer.back() == '\r') answer.pop_back();
    return answer;
}

std::optional<std::string> ask_terminal(const std::string& prompt) {
    int fd = ::open("/dev/tty", O_RDWR | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    termios saved{};
    bool restore = ::tcgetattr(fd, &saved) == 0;
    if (restore) {
        termios quiet = saved;
        quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
        quiet.c_lflag |= ECHONL;
        ::tcsetattr(fd, TCSAFLUSH, &quiet);
    }
    (void)!::write(fd, prompt.data(), prompt.size());
    std::string answer;
    bool got_line = false;
    char c;
    for (;;) {
        ssize_t n = ::read(fd, &c, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (c == '\n' || c == '\r') {
            got_line = true;
            break;
        }
        answer += c;
    }
    if (restore) ::tcsetattr(fd, TCSAFLUSH, &saved);
    ::close(fd);
    if (!got_line && answer.empty()) return std::nullopt;
    return answer;
}

}  // namespace

bool have_terminal() {
    int fd = ::open("/dev/tty", O_RDWR | O_CLOEXEC);
    if (fd < 0) return false;
    ::close(fd);
    return true;
}

std::optional<std::string> prompt_secret(const std::string& prompt) {
    const char* askpass = std::getenv("SSH_ASKPASS");
    const char* require = std::getenv("SSH_ASKPASS_REQUIRE");
    std::string mode = require ? require : "";
    bool has_askpass = askpass && *askpass && mode != "never";
    if (has_askpass && (mode == "force" || mode == "prefer")) return ask_program(askpass, prompt);
    if (have_terminal()) return ask_terminal(prompt);
    if (has_askpass) return ask_program(askpass, prompt);
    return std::nullopt;
}

void wipe(std::string& secret) {
    volatile char* p = secret.data();
    for (size_t i = 0; i < secret.size(); ++i) p[i] = 0;
    secret.clear();
}

}  // namespace mlt
