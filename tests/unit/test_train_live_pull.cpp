// LivePull (--sync-every): the status text, the rule of one log line a minute, a stop that
// cuts a stream short, and whole pulls in a thread against a remote on this machine.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "capturing_reporter.h"
#include "local_remote.h"
#include "mlt/train/watch/live_pull.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/reporter.h"
#include "transfer_fixtures.h"
#include "wait_until.h"

namespace mlt {
namespace {

namespace fs = std::filesystem;

TEST(LivePull, SyncedTextSaysWhenAndWhat) {
    EXPECT_EQ(synced_text("12:03:04", {2, 35u << 20}), "synced 12:03:04: 2 files, 35.0 MiB");
    EXPECT_EQ(synced_text("12:03:04", {1, 10}), "synced 12:03:04: 1 file, 10 B");
    EXPECT_EQ(synced_text("00:00:01", {}), "synced 00:00:01: nothing new");
}

TEST(LivePull, NoticesComeAtMostOnceAMinuteAndAddUpWhatCameInBetween) {
    SyncNotices notices;
    EXPECT_FALSE(notices.add(100, {}).has_value()) << "nothing new: no line";
    auto first = notices.add(101, {1, 10});
    ASSERT_TRUE(first.has_value()) << "the first pull that brings files is told";
    EXPECT_EQ(first->files, 1u);
    EXPECT_FALSE(notices.add(102, {2, 20}).has_value());
    EXPECT_FALSE(notices.add(160.5, {}).has_value()) << "a minute later, but nothing new";
    EXPECT_FALSE(notices.add(150, {1, 5}).has_value()) << "less than a minute after the last";
    auto second = notices.add(161, {1, 1});
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(second->files, 4u) << "the pulls in between are added up";
    EXPECT_EQ(second->bytes, 26u);
    EXPECT_FALSE(notices.add(162, {1, 1}).has_value());
}

// A remote whose command streams output until its sink throws.
class EndlessRemote : public Remote {
  public:
    const std::string& name() const override { return name_; }
    RemoteOutput run(const std::string&, std::string_view) override { return {}; }
    int stream(const std::string&, const InputSource&, const OutputSink& on_stdout,
               const OutputSink&) override {
        for (;;) {
            on_stdout(std::string(4096, 'x'));
            ++chunks;
        }
    }
    std::atomic<int> chunks{0};

  private:
    std::string name_ = "endless";
};

TEST(LivePull, AStopEndsAStreamUnderWayWithinAChunk) {
    EndlessRemote inner;
    std::atomic<bool> stop{false};
    StoppableRemote remote(inner, stop);
    std::atomic<bool> threw{false};
    std::thread pull([&] {
        try {
            remote.stream("cat big", {}, [](std::string_view) {}, {});
        } catch (const Error& e) {
            threw = e.kind() == ErrorKind::interrupted;
        }
    });
    EXPECT_TRUE(test::wait_until([&] { return inner.chunks >= 10; }));  // mid-stream
    stop = true;
    pull.join();
    EXPECT_TRUE(threw);
    EXPECT_THROW(remote.run("true"), Error) << "no new command after a stop";
}

// The remote waits of the pulls' thread (throw_if_interrupted) end on its stop flag; those of
// other threads do not.
TEST(LivePull, AStopScopeEndsTheWaitsOfItsThreadOnly) {
    std::atomic<bool> stop{false};
    const StopScope scope(stop);
    EXPECT_NO_THROW(throw_if_interrupted());
    stop = true;
    EXPECT_THROW(throw_if_interrupted(), Error);
    std::thread other([] { EXPECT_NO_THROW(throw_if_interrupted()); });
    other.join();
}

// The run's connection and its side link: each a LocalRemote (commands on this machine).
class LocalConnection : public Connection {
  public:
    explicit LocalConnection(bool offers_side) : offers_side_(offers_side) {}
    const std::string& name() const override { return remote_.name(); }
    Remote& remote() override { return remote_; }
    void reconnect() override {}
    std::unique_ptr<Connection> open_side() override {
        if (!offers_side_) return nullptr;
        return std::make_unique<LocalConnection>(false);
    }

  private:
    bool offers_side_;
    test::LocalRemote remote_;
};

class ProgressLog : public Reporter {
  public:
    void emit(Event, std::string_view) override {}
};

// The plan of a run whose remote dir is `dir`/remote and whose local logs go to `dir`/local.
TrainPlan plan_in(const std::string& dir) {
    TrainPlan p;
    p.model = "m";
    p.remote_dir = dir + "/remote";
    p.remote_log_dir = dir + "/remote/logs";
    p.local_logs = dir + "/local";
    p.local_console = dir + "/local/console.log";
    p.compression = "none";
    p.sync_every_s = 0;  // one pull right after the other
    return p;
}

// A LivePull of plan_in() on a LocalConnection, with its status line.
class LivePullRun : public ::testing::Test {
  protected:
    test::TempDir temp_;
    const std::string dir_ = temp_.path();
    ProgressLog reporter_;
    StatusLine status_{reporter_};
    LivePull pull_{plan_in(dir_), "run-1", status_, reporter_};
};

TEST_F(LivePullRun, PullsTheRemoteLogDirInItsOwnThreadUntilStopped) {
    fs::create_directories(dir_ + "/remote/logs/sub");
    test::write_file(dir_ + "/remote/logs/sub/ckpt.bin", "weights");
    LocalConnection connection(true);
    ASSERT_TRUE(pull_.start(connection));
    EXPECT_TRUE(pull_.running());
    EXPECT_TRUE(test::wait_until([&] { return pull_.pulls() >= 2; }));
    pull_.stop();
    EXPECT_FALSE(pull_.running());
    ASSERT_GE(pull_.pulls(), 2);
    EXPECT_EQ(test::slurp(dir_ + "/local/sub/ckpt.bin"), "weights");
    EXPECT_NE(status_.text().find("nothing new"), std::string::npos)
        << "the second pull found it unchanged: " << status_.text();
    EXPECT_FALSE(fs::exists(dir_ + "/local/.mlt-pull"));
    pull_.stop();  // again: nothing to do
}

// A node's pulls say what they synced through the node's reporter, which prefixes its lines:
// the line keeps its "[rank N] " (spdlog's would go around it).
TEST(LivePull, TheSyncedLineOfANodeKeepsItsRankPrefix) {
    if (stderr_is_terminal()) GTEST_SKIP() << "on a terminal the status line says it instead";
    test::TempDir temp;
    fs::create_directories(temp.path() + "/remote/logs");
    test::write_file(temp.path() + "/remote/logs/ckpt.bin", "weights");
    test::CapturingReporter shown;
    {
        PrefixReporter node(shown, "[rank 1] ");
        StatusLine status(node);
        LivePull pull(plan_in(temp.path()), "run-1", status, node);
        LocalConnection connection(true);
        ASSERT_TRUE(pull.start(connection));
        EXPECT_TRUE(test::wait_until([&] { return pull.pulls() >= 1; }));
        pull.stop();
    }
    EXPECT_EQ(shown.alerts.rfind("[rank 1] synced ", 0), 0u) << shown.alerts;
    EXPECT_NE(shown.alerts.find(" while training: 1 file, 7 B in " + temp.path() + "/local\n"),
              std::string::npos)
        << shown.alerts;
}

TEST_F(LivePullRun, AConnectionWithoutASideLinkPullsNothing) {
    LocalConnection connection(false);
    EXPECT_FALSE(pull_.start(connection));
    EXPECT_FALSE(pull_.running());
}

}  // namespace
}  // namespace mlt
