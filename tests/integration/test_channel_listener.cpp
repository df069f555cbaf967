// The channel listener (src/ssh/sh/channel_listener.sh, src/ssh/listener.cpp) against a real
// sshd: channels to it run their commands without the account's login shell, and end as
// exec channels do (output of any bytes, stderr, status, a signal, input taken or left);
// a server that forwards no unix sockets gets exec channels; the listener ends with its
// connection and keeps its socket where nobody else can reach it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "harness/files.h"
#include "harness/ssh_test.h"
#include "harness/train_fixture.h"
#include "mlt/ssh/counts.h"
#include "mlt/ssh/remote.h"
#include "mlt/ssh/session.h"
#include "mlt/util/shell.h"

namespace mlt_test {
namespace {

namespace fs = std::filesystem;

class ChannelListenerTest : public SshTest {
  protected:
    void SetUp() override {
        SshTest::SetUp();
        // Every login shell sshd starts reads this (bash, started by sshd): one line a login.
        write_file(sshd().remote_home() + "/.bashrc", "echo x >> \"$HOME/logins\"\n");
    }

    mlt::Session open() { return mlt::Session::open(session_spec()); }

    size_t logins() const {
        return split_lines(read_or_empty(sshd().remote_home() + "/logins")).size();
    }
    // The listeners' socket dirs, in the account's home.
    std::vector<fs::path> listener_dirs() const {
        std::vector<fs::path> dirs;
        for (const auto& entry : fs::directory_iterator(sshd().remote_home()))
            if (entry.path().filename().string().rfind(".mlt-l.", 0) == 0)
                dirs.push_back(entry.path());
        return dirs;
    }
    static std::string read_or_empty(const std::string& path) {
        return path_exists(path) ? read_file(path) : std::string();
    }

    // Every byte value, repeated to `size` bytes.
    static std::string all_bytes(size_t size) {
        std::string s(size, '\0');
        for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>((i * 7 + i / 256) & 0xff);
        return s;
    }

    struct Ran {
        std::string out, err;
        uint64_t taken = 0;
        int status = -2;
    };

    // Runs `commands` side by side (each with its input) on channels of their own.
    static std::vector<Ran> run_side_by_side(mlt::Session& session,
                                             const std::vector<std::string>& commands,
                                             const std::vector<std::string>& inputs) {
        std::vector<Ran> ran(commands.size());
        std::vector<size_t> fed(commands.size(), 0);
        std::vector<mlt::StreamJob> jobs;
        for (size_t i = 0; i < commands.size(); ++i) {
            mlt::StreamJob job;
            job.command = commands[i];
            if (!inputs[i].empty())
                job.input = [&, i](char* buf, size_t cap) {
                    const size_t n = std::min(cap, inputs[i].size() - fed[i]);
                    std::copy_n(inputs[i].data() + fed[i], n, buf);
                    fed[i] += n;
                    return n;
                };
            job.on_stdout = [&ran, i](std::string_view d) { ran[i].out.append(d); };
            job.on_stderr = [&ran, i](std::string_view d) { ran[i].err.append(d); };
            job.on_taken = [&ran, i](uint64_t n) { ran[i].taken += n; };
            jobs.push_back(std::move(job));
        }
        const std::vector<mlt::ExecResult> results = session.exec_parallel(jobs);
        for (size_t i = 0; i < results.size(); ++i) ran[i].status = results[i].exit_status;
        return ran;
    }

    // The same commands on channels to the listener (when `listen`) or exec channels: the
    // results must not tell them apart.
    void expect_commands_end_as_on_exec_channels(mlt::Session& session) {
        const std::string file = sshd().dir() + "/bytes.bin";
        const std::string out_bytes = all_bytes(3 * 1024 * 1024 + 5);
        write_file(file, out_bytes, 0644);
        const std::string in_bytes = all_bytes(5 * 1024 * 1024 + 3);
        const std::string landed = sshd().dir() + "/landed.bin";
        const std::vector<Ran> ran =
            run_side_by_side(session,
                             {"cat " + mlt::shell_quote(file) + "; echo oops >&2; exit 3",
                              "cat > " + mlt::shell_quote(landed) + " && echo stored", "kill -9 $$",
                              "head -c 1 >/dev/null; echo took one byte", "env",
                              "printf here > " + mlt::shell_quote(odd_name())},
                             {"", in_bytes, "", std::string(8 * 1024 * 1024, 'i'), "", ""});
        EXPECT_TRUE(ran[0].out == out_bytes) << ran[0].out.size() << " bytes";
        EXPECT_EQ(ran[0].err, "oops\n");
        EXPECT_EQ(ran[0].status, 3);
        EXPECT_EQ(ran[1].out, "stored\n");
        EXPECT_EQ(ran[1].status, 0);
        EXPECT_EQ(ran[1].taken, in_bytes.size());
        EXPECT_TRUE(read_file(landed) == in_bytes);
        EXPECT_EQ(ran[2].status, -1);
        EXPECT_EQ(ran[3].out, "took one byte\n");
        EXPECT_EQ(ran[3].status, 0);
        EXPECT_EQ(ran[4].status, 0);
        EXPECT_EQ(ran[4].out.find("MLT_LISTEN_TOKEN"), std::string::npos) << ran[4].out;
        // A command's bytes are its bytes, also where they are no UTF-8.
        EXPECT_EQ(ran[5].status, 0) << ran[5].err;
        EXPECT_EQ(read_or_empty(odd_name()), "here");
    }

    // A file name with UTF-8 and a byte that is no UTF-8.
    std::string odd_name() const { return sshd().dir() + "/caf\xc3\xa9-\xff.txt"; }
};

TEST_F(ChannelListenerTest, ChannelsRunCommandsWithoutALoginAndEndAsExecChannelsDo) {
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    ASSERT_EQ(remote.run("true").exit_status, 0);  // the control shell: one login
    const double login = session.channel_cost_s();
    ASSERT_TRUE(session.listen_for_channels());
    EXPECT_TRUE(session.listen_for_channels());  // once a session
    EXPECT_LT(session.channel_cost_s(), 0.05) << "a login cost " << login;
    const size_t before = logins();
    const mlt::SshCounts counts = mlt::ssh_counts();
    expect_commands_end_as_on_exec_channels(session);
    EXPECT_EQ(logins(), before);  // no login for any of the six
    EXPECT_EQ(mlt::ssh_counts().commands, counts.commands);
    EXPECT_EQ(mlt::ssh_counts().channels, counts.channels + 6);
    // The socket's dir is the account's alone.
    const std::vector<fs::path> dirs = listener_dirs();
    ASSERT_EQ(dirs.size(), 1u);
    EXPECT_EQ(file_mode(dirs.front().string()), 0700);
    EXPECT_TRUE(fs::is_socket(dirs.front() / "s"));
}

TEST_F(ChannelListenerTest, WithoutItChannelsLogInAndEndTheSame) {
    mlt::Session session = open();
    const size_t before = logins();
    expect_commands_end_as_on_exec_channels(session);
    EXPECT_EQ(logins(), before + 6);
}

TEST_F(ChannelListenerTest, TheListenerEndsWithItsConnection) {
    {
        mlt::Session session = open();
        mlt::SessionRemote remote(session);
        ASSERT_TRUE(session.listen_for_channels());
        ASSERT_EQ(listener_dirs().size(), 1u);
    }
    // It looks every 2 s whether its control shell still runs.
    EXPECT_TRUE(wait_until([&] { return listener_dirs().empty(); }, std::chrono::seconds(30)))
        << "the listener's dir is still there";
}

TEST_F(ChannelListenerTest, TheOtherSessionsOfAHostTakeItUpAndLogInAgainOnceItIsGone) {
    mlt::Connector connector(session_spec());
    auto first = std::make_unique<mlt::Session>(connector.open());
    ASSERT_TRUE(first->listen_for_channels());
    // A side link of a transfer: its channels go to the first one's listener, and it starts
    // no control shell of its own.
    mlt::Session side = connector.open();
    const size_t before = logins();
    const std::vector<Ran> ran = run_side_by_side(side, {"echo a", "echo b"}, {"", ""});
    EXPECT_EQ(ran[0].out + ran[1].out, "a\nb\n");
    // Its own commands and streams, which would start its control shell (a login), too.
    mlt::SessionRemote side_remote(side);
    const mlt::RemoteOutput said = side_remote.run("cat; echo r >&2", "in");
    EXPECT_EQ(said.out, "in");
    EXPECT_EQ(said.err, "r\n");
    std::string streamed;
    EXPECT_EQ(side_remote.stream("echo s; exit 3", {},
                                 [&](std::string_view d) { streamed.append(d); }, {}),
              3);
    EXPECT_EQ(streamed, "s\n");
    EXPECT_EQ(logins(), before);
    EXPECT_LT(side.channel_cost_s(), 0.05);
    // The first session ends, and its listener with it: the side link's channels log in.
    first.reset();
    ASSERT_TRUE(wait_until([&] { return listener_dirs().empty(); }, std::chrono::seconds(30)));
    const std::vector<Ran> again = run_side_by_side(side, {"echo c", "exit 4"}, {"", ""});
    EXPECT_EQ(again[0].out, "c\n");
    EXPECT_EQ(again[0].status, 0);
    EXPECT_EQ(again[1].status, 4);
    EXPECT_EQ(logins(), before + 2);
}

class ChannelListenerNoForwardingTest : public ChannelListenerTest {
  protected:
    std::string sshd_extra_config() const override { return "AllowStreamLocalForwarding no\n"; }
};

TEST_F(ChannelListenerNoForwardingTest, AServerThatForwardsNoSocketsGetsExecChannels) {
    mlt::Session session = open();
    // The listener starts, and sshd refuses the channel that checks it: channels log in.
    EXPECT_FALSE(session.listen_for_channels());
    EXPECT_EQ(session.channel_cost_s(), session.login_cost_s());
    const size_t before = logins();
    expect_commands_end_as_on_exec_channels(session);
    EXPECT_EQ(logins(), before + 6);
}

}  // namespace
}  // namespace mlt_test
