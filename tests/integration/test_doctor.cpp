// `mlt ssh doctor` against a real sshd: a healthy host, a slow login profile, a PATH without
// sha256sum, a full remote dir. The remote user's profile is the harness's remote home (sshd's
// SetEnv HOME), never the real account's.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/process.h"
#include "harness/ssh_test.h"

namespace mlt_test {
namespace {

class DoctorTest : public SshTest {
  protected:
    void SetUp() override {
        SshTest::SetUp();
        // python3's venv is the host's business (python3-venv need not be installed here):
        // the checks of these tests are the others.
        env().write_settings("ssh:\n  create_venv: false\n");
    }
    void TearDown() override {
        if (!mounted_.empty())
            run_process({"/bin/umount", "-l", mounted_}, {}, std::chrono::seconds(30));
    }

    ProcessResult doctor() {
        trust_server_in(custom_known_hosts());
        return env().run_mlt({"ssh", "-h", host_with_dir(), "-i", sshd().client_key_path(), "-o",
                              "UserKnownHostsFile=" + custom_known_hosts(), "doctor"});
    }

    // The report's line of check `what` ("ok    what: ..."), "" when there is none.
    static std::string line_of(const std::string& out, const std::string& what) {
        for (const std::string& line : split_lines(out))
            if (line.size() > 6 && line.compare(6, what.size() + 1, what + ":") == 0) return line;
        return "";
    }

    // The remote user's ~/.bashrc (bash reads it for every command sshd runs).
    void write_bashrc(const std::string& text) const {
        write_file(sshd().remote_home() + "/.bashrc", text);
    }

    // A dir of links to every program of /usr/bin but `missing`: a remote PATH without it.
    std::string usr_bin_without(const std::string& missing) const {
        const std::string bin = sshd().dir() + "/bin-without-" + missing;
        make_dir(bin, 0755);
        DIR* dir = ::opendir("/usr/bin");
        EXPECT_NE(dir, nullptr);
        while (const dirent* entry = dir ? ::readdir(dir) : nullptr) {
            const std::string name = entry->d_name;
            if (name == "." || name == ".." || name == missing) continue;
            EXPECT_EQ(::symlink(("/usr/bin/" + name).c_str(), (bin + "/" + name).c_str()), 0)
                << name;
        }
        if (dir) ::closedir(dir);
        return bin;
    }

    std::string mounted_;
};

TEST_F(DoctorTest, AHealthyHostPassesWithEveryRequiredToolOk) {
    const ProcessResult r = doctor();
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    for (const char* tool : {"sh", "tar", "sha256sum", "flock", "awk", "setsid"})
        EXPECT_TRUE(has_text(line_of(r.out, tool), "ok    ")) << tool << "\n" << r.out;
    EXPECT_TRUE(has_text(line_of(r.out, "host key"), "ok    host key: known")) << r.out;
    EXPECT_TRUE(has_text(line_of(r.out, "login"), "publickey (" + sshd().client_key_path()))
        << r.out;
    // (The login shell's cost is not asserted: on a loaded machine it is what it is.)
    EXPECT_TRUE(has_text(line_of(r.out, "login shell"), "/")) << r.out;
    EXPECT_TRUE(has_text(line_of(r.out, "disk"), sshd().remote_dir())) << r.out;
    EXPECT_TRUE(has_text(line_of(r.out, "connections"), "a second connection accepted")) << r.out;
    EXPECT_TRUE(has_text(line_of(r.out, "throughput"), "16.0 MiB up")) << r.out;
    EXPECT_TRUE(has_text(r.out, "has what a train needs")) << r.out;
    EXPECT_TRUE(lacks_text(r.out, "FAIL")) << r.out;
}

TEST_F(DoctorTest, ASlowProfileWarnsAndNamesTheFile) {
    write_bashrc("sleep 0.5\n");
    const ProcessResult r = doctor();
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    const std::string shell = line_of(r.out, "login shell");
    EXPECT_TRUE(has_text(shell, "warn  login shell:")) << r.out;
    EXPECT_TRUE(has_text(shell, "in ~/.bashrc")) << r.out;
}

TEST_F(DoctorTest, AMissingToolFailsNamingIt) {
    const std::string bin = usr_bin_without("sha256sum");
    write_bashrc("PATH=" + bin + "; export PATH\n");
    const ProcessResult r = doctor();
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(has_text(line_of(r.out, "sha256sum"), "FAIL  sha256sum: not found")) << r.out;
    EXPECT_TRUE(has_text(line_of(r.out, "tar"), "ok    ")) << r.out;
    EXPECT_TRUE(has_text(r.out, "1 check FAILED")) << r.out;
}

TEST_F(DoctorTest, AFullRemoteDirFailsOnDisk) {
    const ProcessResult m =
        run_process({"/bin/mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", sshd().remote_dir()},
                    {}, std::chrono::seconds(30));
    ASSERT_EQ(m.exit_code, 0) << "the test needs to mount a tmpfs (root): " << describe(m);
    mounted_ = sshd().remote_dir();
    run_process({"/bin/sh", "-c", "head -c 2000000 /dev/zero > \"$1\"", "sh",
                 sshd().remote_dir() + "/fill.bin"},
                current_environment(), std::chrono::seconds(30));
    const ProcessResult r = doctor();
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(has_text(line_of(r.out, "disk"), "FAIL  disk: " + sshd().remote_dir())) << r.out;
}

// python3 only on the PATH that a login shell's profile sets (pyenv, conda in ~/.profile): the
// training runs under `bash --login`, so it finds it, and doctor says so.
TEST_F(DoctorTest, PythonOnTheLoginPathOnlyCounts) {
    write_bashrc("PATH=" + usr_bin_without("python3") + "; export PATH\n");
    write_file(sshd().remote_home() + "/.profile", "PATH=\"$PATH:/usr/bin\"; export PATH\n");
    const ProcessResult r = doctor();
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(line_of(r.out, "python3"),
                         "ok    python3: /usr/bin/python3 (on a login shell's PATH only"))
        << r.out;
}

// sshd's MaxSessions under its default 10: the channels one connection opened are counted,
// and the report says so (a warning: train still works).
class DoctorFewSessionsTest : public DoctorTest {
  protected:
    std::string sshd_extra_config() const override { return "MaxSessions 3\n"; }
};

TEST_F(DoctorFewSessionsTest, FewerChannelsWarn) {
    const ProcessResult r = doctor();
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(
        has_text(line_of(r.out, "connections"), "warn  connections: 3 channels of 10 tried"))
        << r.out;
}

}  // namespace
}  // namespace mlt_test
