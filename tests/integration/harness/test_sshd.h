#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "harness/temp_dir.h"

namespace mlt_test {

// A real OpenSSH sshd on 127.0.0.1 and a free port, configured in its own TempDir: an
// ed25519 host key, a client ed25519 key in authorized_keys, public key auth only.
// The constructor returns once sshd listens; it throws std::runtime_error (with sshd's
// log) when sshd cannot be started within a few tries. Works as root and as a normal user.
class TestSshd {
  public:
    // `extra_config`: sshd_config lines that go before the defaults (sshd keeps the first
    // value of a keyword, so they override), e.g. "MaxSessions 2\n".
    explicit TestSshd(std::string extra_config = {});
    ~TestSshd();  // SIGTERM, then SIGKILL after a bounded wait; the child is reaped
    TestSshd(const TestSshd&) = delete;
    TestSshd& operator=(const TestSshd&) = delete;

    // Stops sshd (SIGTERM, then SIGKILL after a bounded wait); its files stay, so that a
    // test can start it again itself: `sshd -f config_path()` listens on the same port and
    // writes pid_file().
    void stop();
    std::string config_path() const { return dir_.file("sshd_config"); }
    std::string pid_file() const { return dir_.file("sshd.pid"); }

    // The TCP port sshd listens on (on 127.0.0.1).
    int port() const { return port_; }
    // The directory holding keys, config, log, home() and remote_dir().
    const std::string& dir() const { return dir_.path(); }
    // The host's public key file (ed25519).
    std::string host_key_pub_path() const { return dir_.file("ssh_host_ed25519_key.pub"); }
    // "ssh-ed25519 AAAA..." of the host key (no comment).
    const std::string& host_key_type_and_blob() const { return host_key_blob_; }
    // "SHA256:..." of the host key, as `ssh-keygen -lf` prints it.
    const std::string& host_key_fingerprint() const { return host_key_fingerprint_; }
    // The known_hosts line OpenSSH writes for this server: "[127.0.0.1]:PORT ssh-ed25519 AAAA...".
    std::string known_hosts_line() const;
    // An unencrypted ed25519 private key whose public half is authorized.
    std::string client_key_path() const { return dir_.file("client_key"); }
    // The login name of the current user (getpwuid), which the server accepts.
    const std::string& user() const { return user_; }
    // A fresh home directory for the client side, with an empty .ssh (0700).
    std::string home() const { return dir_.file("home"); }
    // The remote side's home: sshd sets HOME to it (SetEnv) for every session, so that the
    // login shells of the jobs read a login profile the tests control (none, unless a test
    // writes one), never the real account's (~/.profile with pyenv: ~1 s per login, and a
    // lock that a killed login can leave behind). The login's working directory stays the
    // account's home from the password database (sshd's chdir).
    std::string remote_home() const { return dir_.file("remote-home"); }
    // An empty directory, usable as the remote working directory.
    std::string remote_dir() const { return dir_.file("remote"); }
    // The authorized_keys file sshd reads.
    std::string authorized_keys_path() const { return dir_.file("authorized_keys"); }

    // Authorizes the public key in `pub_key_path` (appended to authorized_keys).
    void authorize_key_file(const std::string& pub_key_path);
    // Authorizes one public key line.
    void authorize_key_line(const std::string& pub_line);

    // Everything sshd logged so far, and its size (an offset for connections_since); the
    // file it logs to (LogLevel VERBOSE).
    std::string log_text() const;
    std::string log_path() const { return dir_.file("sshd.log"); }
    std::size_t log_size() const;
    // The "Connection from" lines logged after `log_offset`. It first opens and closes a
    // marker connection and waits (bounded) until sshd logged it, so that a connection a
    // client made before this call is in the log; marker connections are never returned.
    std::vector<std::string> connections_since(std::size_t log_offset) const;

    // argv of an OpenSSH client login running `command` with `key`: no config file, no
    // agent use, BatchMode, the given known_hosts file and StrictHostKeyChecking policy.
    std::vector<std::string> openssh_argv(const std::string& key, const std::string& known_hosts,
                                          const std::string& command = "true",
                                          const std::string& strict = "accept-new") const;

  private:
    bool try_start(std::string* why);
    std::string config_text() const;

    TempDir dir_{"mlt-sshd-"};
    std::string user_;
    std::string extra_config_;
    std::string host_key_blob_;
    std::string host_key_fingerprint_;
    int port_ = 0;
    pid_t pid_ = -1;
    mutable std::vector<std::string> markers_;  // "Connection from" prefixes of markers
};

}  // namespace mlt_test
