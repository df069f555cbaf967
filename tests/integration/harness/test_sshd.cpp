#include "harness/test_sshd.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "harness/files.h"
#include "harness/net.h"
#include "harness/openssh.h"
#include "harness/time_factor.h"

namespace mlt_test {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kSshdPath = "/usr/sbin/sshd";
constexpr int kStartAttempts = 5;
const std::chrono::seconds kStartTimeout = scaled(std::chrono::seconds{10});
const std::chrono::seconds kStopTimeout = scaled(std::chrono::seconds{5});
const std::chrono::seconds kMarkerTimeout = scaled(std::chrono::seconds{10});
constexpr std::chrono::milliseconds kPollInterval{20};

void wait_a_little() {
    poll(nullptr, 0, static_cast<int>(kPollInterval.count()));
}

std::string current_user() {
    const passwd* pw = getpwuid(geteuid());
    if (pw == nullptr) throw std::runtime_error("getpwuid: no passwd entry for the current user");
    return pw->pw_name;
}

// Waits until `pid` exits (true) or the timeout passes (false).
bool reap_within(pid_t pid, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    int status = 0;
    while (true) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid || (w < 0 && errno == ECHILD)) return true;
        if (Clock::now() >= deadline) return false;
        wait_a_little();
    }
}

}  // namespace

TestSshd::TestSshd(std::string extra_config)
    : user_(current_user()), extra_config_(std::move(extra_config)) {
    make_dir(home(), 0755);
    make_dir(home() + "/.ssh", 0700);
    make_dir(remote_dir(), 0755);
    make_dir(remote_home(), 0755);
    make_ssh_key(dir_.file("ssh_host_ed25519_key"), "ed25519", "", "mlt-test-host");
    make_ssh_key(client_key_path(), "ed25519", "", "mlt-test-client");
    write_file(authorized_keys_path(), "", 0600);
    authorize_key_file(client_key_path() + ".pub");
    host_key_blob_ = key_type_and_blob(read_file(host_key_pub_path()));
    host_key_fingerprint_ = key_info(host_key_pub_path()).fingerprint;
    if (geteuid() == 0) {
        // Privilege separation of a root sshd chroots into /run/sshd.
        mkdir("/run/sshd", 0755);
    }
    std::string why;
    for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
        if (try_start(&why)) return;
    }
    throw std::runtime_error("sshd did not start: " + why);
}

TestSshd::~TestSshd() {
    stop();
}

std::string TestSshd::config_text() const {
    std::string cfg = extra_config_;
    cfg += "ListenAddress 127.0.0.1\n";
    cfg += "Port " + std::to_string(port_) + "\n";
    cfg += "HostKey " + dir_.file("ssh_host_ed25519_key") + "\n";
    cfg += "AuthorizedKeysFile " + authorized_keys_path() + "\n";
    cfg += "PidFile " + dir_.file("sshd.pid") + "\n";
    cfg += "StrictModes no\n";
    cfg += "UsePAM no\n";
    if (geteuid() == 0) cfg += "PermitRootLogin yes\n";
    cfg += "PubkeyAuthentication yes\n";
    cfg += "PasswordAuthentication no\n";
    cfg += "KbdInteractiveAuthentication no\n";
    cfg += "MaxStartups 100\n";
    cfg += "MaxSessions 20\n";
    cfg += "Subsystem sftp internal-sftp\n";
    cfg += "LogLevel VERBOSE\n";
    cfg += "SetEnv HOME=" + remote_home() + "\n";
    return cfg;
}

bool TestSshd::try_start(std::string* why) {
    port_ = find_free_port();
    const std::string cfg_path = dir_.file("sshd_config");
    write_file(cfg_path, config_text(), 0600);
    write_file(log_path(), "", 0644);
    int log_fd = open(log_path().c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (log_fd < 0 || null_fd < 0) throw std::runtime_error("cannot open sshd log or /dev/null");
    std::vector<std::string> args = {kSshdPath, "-D", "-e", "-f", cfg_path};
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);
        dup2(null_fd, STDIN_FILENO);
        dup2(null_fd, STDOUT_FILENO);
        dup2(log_fd, STDERR_FILENO);
        signal(SIGPIPE, SIG_DFL);
        execv(kSshdPath, argv.data());
        _exit(127);
    }
    close(log_fd);
    close(null_fd);
    pid_ = pid;
    const std::string ready = "Server listening on 127.0.0.1 port " + std::to_string(port_);
    const auto deadline = Clock::now() + kStartTimeout;
    while (Clock::now() < deadline) {
        std::string log = read_file(log_path());
        if (log.find(ready) != std::string::npos) return true;
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
            // Typically "Bind to port N on 127.0.0.1 failed": someone took the port.
            pid_ = -1;
            *why = "sshd exited; log:\n" + log;
            return false;
        }
        wait_a_little();
    }
    *why = "sshd not listening after " + std::to_string(kStartTimeout.count()) + " s; log:\n" +
           read_file(log_path());
    stop();
    return false;
}

void TestSshd::stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    if (!reap_within(pid_, kStopTimeout)) {
        kill(-pid_, SIGKILL);
        kill(pid_, SIGKILL);
        reap_within(pid_, kStopTimeout);
    }
    pid_ = -1;
}

std::string TestSshd::known_hosts_line() const {
    return "[127.0.0.1]:" + std::to_string(port_) + " " + host_key_blob_;
}

void TestSshd::authorize_key_file(const std::string& pub_key_path) {
    authorize_key_line(trim(read_file(pub_key_path)));
}

void TestSshd::authorize_key_line(const std::string& pub_line) {
    append_file(authorized_keys_path(), pub_line + "\n");
}

std::string TestSshd::log_text() const {
    return read_file(log_path());
}

std::size_t TestSshd::log_size() const {
    return log_text().size();
}

std::vector<std::string> TestSshd::connections_since(std::size_t log_offset) const {
    int fd = -1;
    int local_port = 0;
    if (!connect_loopback(port_, &fd, &local_port)) {
        throw std::runtime_error("marker connection to sshd refused");
    }
    const std::string marker = "Connection from 127.0.0.1 port " + std::to_string(local_port) + " ";
    const auto deadline = Clock::now() + kMarkerTimeout;
    std::string log = log_text();
    while (log.find(marker, log_offset) == std::string::npos && Clock::now() < deadline) {
        wait_a_little();
        log = log_text();
    }
    close(fd);
    if (log.find(marker, log_offset) == std::string::npos) {
        throw std::runtime_error("sshd did not log the marker connection; log:\n" + log);
    }
    markers_.push_back(marker);
    std::vector<std::string> found;
    for (const auto& line : split_lines(log.substr(std::min(log_offset, log.size())))) {
        if (line.find("Connection from ") == std::string::npos) continue;
        bool is_marker = false;
        for (const auto& m : markers_) is_marker = is_marker || line.find(m) != std::string::npos;
        if (!is_marker) found.push_back(line);
    }
    return found;
}

std::vector<std::string> TestSshd::openssh_argv(const std::string& key,
                                                const std::string& known_hosts,
                                                const std::string& command,
                                                const std::string& strict) const {
    return {"ssh",
            "-F",
            "/dev/null",
            "-i",
            key,
            "-p",
            std::to_string(port_),
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "IdentityAgent=none",
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=10",
            "-o",
            "GlobalKnownHostsFile=/dev/null",
            "-o",
            "UserKnownHostsFile=" + known_hosts,
            "-o",
            "StrictHostKeyChecking=" + strict,
            user_ + "@127.0.0.1",
            command};
}

}  // namespace mlt_test
