// Bounds against a remote that sends too much or too little (issue 37, "Bounded everything"),
// with a real sshd. At the Session: a control command's stdout is capped at 1 MiB (the session
// goes on), stderr is kept as its last 64 KiB, and a data stream that trickles ends with an
// error naming it. Through mlt, with tools on the remote PATH that flood or drip (a sshd
// ForceCommand puts them first): memory and the debug log stay bounded, a signal is acted on
// during a flood, a trickling tar stream ends with the error, and a range whose `dd` freezes
// moves to the other connection.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "harness/files.h"
#include "harness/temp_dir.h"
#include "harness/train_fixture.h"
#include "mlt/ssh/remote.h"
#include "mlt/ssh/session.h"

namespace fs = std::filesystem;

namespace mlt_test {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;

// Under AddressSanitizer freed memory stays resident a while (its quarantine), and
// ThreadSanitizer's shadow memory is a few times mlt's own: a peak RSS says nothing there, so
// the memory bounds below are checked in the plain build only.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// The peak RSS an mlt run may reach here: some 25 MiB is its own; a flood kept whole
// (50 MiB and more below) passes this.
constexpr long kMaxRssKib = 64 * 1024;

// The floor's window in these tests: short, scaled for slow builds (sanitizers).
int stall_seconds() {
    return 2 * time_factor();
}

class BoundedSessionTest : public SshTest {
  protected:
    mlt::Session open(mlt::ProgressFloor floor = {}) {
        mlt::ConnectSpec spec = session_spec();
        spec.data_floor = floor;
        return mlt::Session::open(spec);
    }
};

TEST_F(BoundedSessionTest, ControlOutputOverOneMiBEndsThatCommandAndTheSessionGoesOn) {
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    EXPECT_EQ(remote.run("head -c 1048576 /dev/zero").out.size(), 1048576u) << "at the cap";
    try {
        remote.run("head -c 5242880 /dev/zero; echo after");
        FAIL() << "5 MiB of output were taken";
    } catch (const mlt::Error& e) {
        const std::string what = e.what();
        EXPECT_EQ(e.kind(), mlt::ErrorKind::remote) << what;
        EXPECT_NE(what.find("the remote sent more than 1.0 MiB"), std::string::npos) << what;
        EXPECT_NE(what.find(remote.name()), std::string::npos) << what;
        EXPECT_NE(what.find("head -c 5242880"), std::string::npos) << what;
    }
    EXPECT_EQ(remote.run("echo alive").out, "alive\n");
    EXPECT_EQ(remote.run("echo still; echo here >&2").err, "here\n");
}

TEST_F(BoundedSessionTest, StderrOfAnyLengthIsKeptAsItsLast64KiB) {
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    const mlt::RemoteOutput r =
        remote.run("head -c 52428800 /dev/zero | tr '\\0' e >&2; echo the end >&2; echo done");
    EXPECT_EQ(r.exit_status, 0);
    EXPECT_EQ(r.out, "done\n");
    EXPECT_EQ(r.err.size(), mlt::kKeptStderr);
    EXPECT_EQ(r.err.substr(r.err.size() - 8), "the end\n");
}

// A command that prints one byte every 0.2 s for a while (10 s, scaled).
std::string trickle(const std::string& to = "") {
    return "i=0; while [ $i -lt " + std::to_string(50 * time_factor()) + " ]; do printf x" + to +
           "; sleep 0.2; i=$((i+1)); done";
}

// A stream of `command` named as data (or not) on the control shell (no input: one job goes
// as stream() does) or on exec channels (two jobs); the exit statuses.
std::vector<int> stream(mlt::Remote& remote, const std::string& command, const std::string& name,
                        bool exec) {
    std::vector<mlt::StreamJob> jobs(exec ? 2 : 1);
    for (auto& job : jobs) {
        job.command = command;
        job.data_stream = name;
    }
    if (exec) jobs.back().command = "true";
    return remote.stream_parallel(jobs);
}

TEST_F(BoundedSessionTest, ADataStreamThatTricklesEndsWithAnErrorNamingIt) {
    const auto window = stall_seconds();
    mlt::Session session = open({64 * 1024, static_cast<double>(window)});
    mlt::SessionRemote remote(session);
    const TempDir scratch;
    for (const bool exec : {false, true}) {
        SCOPED_TRACE(exec ? "exec channels" : "control shell");
        const std::string ended = scratch.file(exec ? "exec-ended" : "shell-ended");
        try {
            stream(remote, trickle() + "; : > " + ended, "the test stream", exec);
            FAIL() << "a trickle of 5 B/s passed a floor of 64 KiB/s";
        } catch (const mlt::StallError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("the test stream on " + remote.name() + " trickled: "),
                      std::string::npos)
                << what;
            EXPECT_NE(what.find("under the floor of 64.0 KiB/s"), std::string::npos) << what;
        }
        // Ended by the floor while the command still trickled, not by the command's end.
        EXPECT_FALSE(path_exists(ended));
        EXPECT_EQ(remote.run("echo alive").out, "alive\n");
    }
}

TEST_F(BoundedSessionTest, StderrIsNoProgressAndAStreamThatIsNoDataHasNoFloor) {
    const auto window = stall_seconds();
    mlt::Session session = open({64 * 1024, static_cast<double>(window)});
    mlt::SessionRemote remote(session);
    try {
        stream(remote, trickle(" >&2"), "the flood", false);
        FAIL() << "stderr counted as progress";
    } catch (const mlt::StallError& e) {
        EXPECT_NE(std::string(e.what()).find("the flood on " + remote.name() +
                                             " stalled: nothing moved in the last"),
                  std::string::npos)
            << e.what();
    }
    // Unnamed (a log follow): the same trickle runs to its end.
    const std::string short_trickle = "i=0; while [ $i -lt " + std::to_string(window * 10) +
                                      " ]; do printf x; sleep 0.2; i=$((i+1)); done";
    EXPECT_EQ(stream(remote, short_trickle, "", false), std::vector<int>{0});
}

// ---- through mlt, with tools on the remote PATH that flood or drip ----

class HostileToolsTest : public TrainTest {
  protected:
    // Every command the server runs finds tools_ first on its PATH.
    std::string sshd_extra_config() const override {
        return "ForceCommand PATH=" + tools_.path() +
               ":$PATH; export PATH; eval \"$SSH_ORIGINAL_COMMAND\"\n";
    }

    // Puts a tool `name` on the remote PATH: a sh script `body`, in which REAL stands for
    // the real program (found on this machine's PATH), TOOLS for the tools' dir and WORK for
    // the sshd's dir (a process left there is ended with the test).
    void tool(const std::string& name, std::string body) const {
        const std::string real = env().run({"sh", "-c", "command -v " + name}).out;
        for (const auto& [word, value] :
             {std::pair<std::string, std::string>{"REAL", real.substr(0, real.find('\n'))},
              {"TOOLS", tools_.path()},
              {"WORK", sshd().dir()}})
            for (size_t at = 0; (at = body.find(word, at)) != std::string::npos; at += value.size())
                body.replace(at, word.size(), value);
        write_file(tools_.file(name), "#!/bin/sh\n" + body, 0755);
    }

    // Trains model m once (a job that writes a small log file), then puts a new small file
    // into its remote log dir, which `download m` pulls in a tar stream; `settings` go into
    // the model's settings.
    void trained_model(const std::string& settings = {}) {
        write_shell_model("m", "echo log > \"$MLT_LOG_DIR/log.txt\"; echo trained\n");
        write_model_settings("m", "ssh:\n  train_cmd: \"sh {spec}\"\n" + settings);
        write_user_settings();
        const ProcessResult r = mlt({"ssh", "train", "m"});
        ASSERT_EQ(r.exit_code, 0) << describe(r);
        write_file(remote_logs_root() + "/m/new.txt", "new\n");
    }

    // The sizes of the debug log's files (mlt.log, mlt.log.1, ...).
    std::vector<uint64_t> debug_log_sizes() const {
        std::vector<uint64_t> sizes;
        const std::string base = env().home() + "/.mltk/cli_logs/mlt.log";
        for (int i = 0; i < 5; ++i) {
            const std::string path = i == 0 ? base : base + "." + std::to_string(i);
            if (fs::exists(path)) sizes.push_back(fs::file_size(path));
        }
        return sizes;
    }

    TempDir tools_{"mlt-tools-"};
};

TEST_F(HostileToolsTest, ATarThatFloodsStderrCostsNoMemoryAndNoLogSpace) {
    trained_model();
    // 50 MB on stderr, then the real tar: the pull succeeds.
    tool("tar", "head -c 52428800 /dev/zero | tr '\\0' e >&2\nexec REAL \"$@\"\n");
    const ProcessResult r = mlt({"ssh", "-v", "download", "m"});
    ASSERT_EQ(r.exit_code, 0) << describe(r).substr(0, 4000);
    EXPECT_EQ(read_file(local_logs("m") + "/new.txt"), "new\n");
    ASSERT_GT(r.peak_rss_kib, 0);
    if (!kSanitized) {
        EXPECT_LT(r.peak_rss_kib, kMaxRssKib) << "the flood was kept in memory";
    }
    EXPECT_LT(r.err.size(), 1 * kMiB) << "the flood reached the terminal";
    for (const uint64_t size : debug_log_sizes()) EXPECT_LE(size, 8 * kMiB);
}

TEST_F(HostileToolsTest, SigtermDuringAFloodEndsMltAtOnce) {
    trained_model();
    // Floods stderr until it is killed, after a mark that it began.
    tool("tar", "touch TOOLS/flooding\nexec yes eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee >&2\n");
    auto run = start_mlt({"ssh", "download", "m"});
    ASSERT_TRUE(wait_until([&] { return fs::exists(tools_.file("flooding")); }, kEffectTimeout))
        << run->err();
    run->signal(SIGTERM);
    const ProcessResult r = run->wait(scaled(std::chrono::seconds(10)));
    EXPECT_FALSE(r.timed_out) << "SIGTERM was not acted on during the flood";
    EXPECT_EQ(r.exit_code, 143) << describe(r).substr(0, 4000);
}

TEST_F(HostileToolsTest, ATarThatOnlyDripsOnStderrEndsWithTheStall) {
    trained_model("  transfer: {stall_seconds: " + std::to_string(stall_seconds()) + "}\n");
    tool("tar", "while :; do printf e >&2; sleep 0.5; done\n");
    const ProcessResult r = mlt({"ssh", "download", "m"}, scaled(std::chrono::seconds(40)));
    EXPECT_FALSE(r.timed_out) << "the pull waited for the drip";
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_NE(r.err.find("the tar stream of "), std::string::npos) << r.err;
    EXPECT_NE(
        r.err.find(" stalled: nothing moved in the last " + std::to_string(stall_seconds()) + " s"),
        std::string::npos)
        << r.err;
}

TEST_F(HostileToolsTest, StatusAgainstADateThatFloodsFailsWithTheCap) {
    make_finished_job("m", 0);
    write_user_settings();
    tool("date", "head -c 67108864 /dev/zero | tr '\\0' 1\n");  // 64 MiB
    const ProcessResult r = mlt({"ssh", "status"});
    EXPECT_EQ(r.exit_code, 1) << describe(r).substr(0, 4000);
    EXPECT_NE(r.err.find("the remote sent more than 1.0 MiB of output"), std::string::npos)
        << r.err.substr(0, 4000);
    ASSERT_GT(r.peak_rss_kib, 0);
    if (!kSanitized) {
        EXPECT_LT(r.peak_rss_kib, kMaxRssKib) << "the output was kept whole";
    }
}

// `size` bytes that do not compress (a fixed-seed PRNG), so that they go as ranges.
void write_noise(const std::string& path, uint64_t size) {
    std::mt19937_64 gen(7);
    std::string data(size, '\0');
    for (uint64_t i = 0; i + 8 <= size; i += 8) {
        const uint64_t v = gen();
        for (int b = 0; b < 8; ++b) data[i + b] = static_cast<char>(v >> (8 * b));
    }
    write_file(path, data);
}

TEST_F(HostileToolsTest, ARangeWhoseReadFreezesMovesToTheOtherConnection) {
    trained_model("  transfer: {connections: 2, stall_seconds: " + std::to_string(stall_seconds()) +
                  "}\n");
    write_noise(remote_logs_root() + "/m/big.bin", 96 * kMiB);
    // The first dd that reads a range sends 2 MB of it, then freezes (for longer than this
    // test may take); the others are the real dd.
    tool("dd",
         "case \" $* \" in *\" if=\"*) if mkdir TOOLS/froze 2>/dev/null; then\n"
         "  REAL \"$@\" 2>/dev/null | head -c 2000000; cd WORK && exec sleep 120; fi;; esac\n"
         "exec REAL \"$@\"\n");
    const ProcessResult r = mlt({"ssh", "download", "m"}, scaled(std::chrono::seconds(50)));
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(fs::exists(tools_.file("froze"))) << "no dd froze";
    EXPECT_EQ(sha256_of(local_logs("m") + "/big.bin"),
              sha256_of(remote_logs_root() + "/m/big.bin"));
}

}  // namespace
}  // namespace mlt_test
