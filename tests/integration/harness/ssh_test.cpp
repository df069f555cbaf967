#include "harness/ssh_test.h"

#include "harness/files.h"

namespace mlt_test {

void SshTest::SetUp() {
    sshd_ = std::make_unique<TestSshd>(sshd_extra_config());
    env_ = std::make_unique<MltEnv>(sshd_->home());
}

std::string SshTest::host() const {
    return sshd_->user() + "@127.0.0.1:" + std::to_string(sshd_->port());
}

std::string SshTest::host_with_dir() const {
    return host() + "/" + sshd_->remote_dir();
}

mlt::ConnectSpec SshTest::session_spec() const {
    mlt::ConnectSpec spec;
    spec.host = "127.0.0.1";
    spec.user = sshd().user();
    spec.port = sshd().port();
    spec.identity_file = sshd().client_key_path();
    spec.known_hosts_path = custom_known_hosts();
    spec.host_key_checking = mlt::HostKeyChecking::accept_new;
    return spec;
}

std::string SshTest::custom_known_hosts() const {
    return sshd_->dir() + "/known_hosts";
}

std::string SshTest::default_known_hosts() const {
    return env_->ssh_dir() + "/known_hosts";
}

void SshTest::trust_server_in(const std::string& path) const {
    write_file(path, sshd_->known_hosts_line() + "\n", 0644);
}

std::string SshTest::ssh_config_entry(const std::string& alias, int port,
                                      const std::string& known_hosts,
                                      const std::string& extra) const {
    std::string entry = "Host " + alias + "\n";
    entry += "    HostName 127.0.0.1\n";
    entry += "    Port " + std::to_string(port) + "\n";
    entry += "    User " + sshd_->user() + "\n";
    entry += "    IdentityFile " + sshd_->client_key_path() + "\n";
    entry += "    UserKnownHostsFile " + known_hosts + "\n";
    entry += extra;
    return entry;
}

ProcessResult SshTest::run_status(const std::vector<std::string>& extra) {
    trust_server_in(custom_known_hosts());
    std::vector<std::string> args = {"ssh",
                                     "-h",
                                     host_with_dir(),
                                     "-i",
                                     sshd_->client_key_path(),
                                     "-o",
                                     "UserKnownHostsFile=" + custom_known_hosts()};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("status");
    return env_->run_mlt(args);
}

std::size_t SshTest::login_count() const {
    return count_occurrences(sshd_->log_text(), "Accepted publickey for " + sshd_->user() + " ");
}

::testing::AssertionResult SshTest::logged_in() const {
    if (login_count() > 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "sshd logged no login; " << sshd_log();
}

void SshTest::make_finished_job(const std::string& model, int exit_status) const {
    const std::string dir = sshd_->remote_dir() + "/.mlt";
    make_dir(dir, 0755);
    make_dir(dir + "/" + model, 0755);
    write_file(dir + "/" + model + "/lock", "owner=test@localhost\nstarted=1700000000\n");
    write_file(dir + "/" + model + "/exit_status", std::to_string(exit_status) + "\n");
}

std::string SshTest::sshd_log() const {
    return "sshd log:\n" + sshd_->log_text();
}

}  // namespace mlt_test
