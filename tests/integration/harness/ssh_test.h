#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/mlt_env.h"
#include "harness/test_sshd.h"
#include "mlt/ssh/session.h"

namespace mlt_test {

// A gtest fixture with a running TestSshd and an MltEnv whose HOME is the server's home().
class SshTest : public ::testing::Test {
  protected:
    void SetUp() override;
    // sshd_config lines for this fixture's server (TestSshd's extra_config).
    virtual std::string sshd_extra_config() const { return {}; }

    TestSshd& sshd() { return *sshd_; }
    const TestSshd& sshd() const { return *sshd_; }
    MltEnv& env() { return *env_; }
    const MltEnv& env() const { return *env_; }

    // "<user>@127.0.0.1:<port>": the -h value for the test server.
    std::string host() const;
    // host() + "/" + the absolute remote_dir(): MLTK's `[user@]host[:port][/path]` form.
    std::string host_with_dir() const;
    // A known_hosts file outside $HOME/.ssh (not created).
    std::string custom_known_hosts() const;
    // What a test that opens mlt::Session itself connects with: the test server as its
    // user, with the client key, recording the host key in custom_known_hosts().
    mlt::ConnectSpec session_spec() const;
    // $HOME/.ssh/known_hosts, mlt's default.
    std::string default_known_hosts() const;
    // Writes `path` so that it trusts the test server (one line, OpenSSH format).
    void trust_server_in(const std::string& path) const;

    // An OpenSSH client config `Host alias` entry for the test server (HostName, Port, User,
    // IdentityFile client_key, UserKnownHostsFile known_hosts) plus `extra` lines; `port`
    // may be wrong on purpose.
    std::string ssh_config_entry(const std::string& alias, int port, const std::string& known_hosts,
                                 const std::string& extra = {}) const;

    // `mlt ssh -h host_with_dir() -i client_key -o UserKnownHostsFile=<trusted file>
    // extra... status`: the common happy path; `extra` goes before `status`.
    ProcessResult run_status(const std::vector<std::string>& extra = {});

    // Success when sshd logged a public key login of user() (a client really got in).
    ::testing::AssertionResult logged_in() const;
    // How many public key logins of user() sshd logged.
    std::size_t login_count() const;
    // Creates <remote_dir>/.mlt/<model>/ as a finished job (lock, exit_status;
    // docs/remote-protocol.md).
    void make_finished_job(const std::string& model, int exit_status) const;

    // "sshd log:\n..." for assertion messages.
    std::string sshd_log() const;

  private:
    std::unique_ptr<TestSshd> sshd_;
    std::unique_ptr<MltEnv> env_;
};

}  // namespace mlt_test
