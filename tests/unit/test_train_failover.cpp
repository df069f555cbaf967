// Failover in the run engine, against in-memory hosts: a host lost for good while its job may
// run moves the run to a standby host as the next attempt, with the local log dir and the
// console copy pushed; never once the job has ended, never with --no-failover. And the
// parsing of standby host entries.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "capturing_reporter.h"
#include "fake_job_host.h"
#include "mlt/train/recovery/failover.h"
#include "mlt/train/run/train_run.h"
#include "run_in_memory.h"
#include "transfer_fixtures.h"

namespace fs = std::filesystem;
using mlt::test::Cut;
using mlt::test::FakeHostConnection;
using mlt::test::FakeJobHost;

namespace {

using mlt::test::ManualClock;
using mlt::test::slurp;

// Host A's plan: its remote dir, a workspace file to upload, no shutdown_cmds.
mlt::TrainPlan plan(const std::string& local) {
    mlt::TrainPlan p = mlt::test::memory_plan(local);
    p.remote_dir = "/remote-a";
    p.shutdown_cmds.clear();
    p.reconnect_timeout_s = 20;
    p.uploads["/remote-a"] = {{local + "/project/m.py", "m.py"}};
    p.resume_line = "mlt ssh -h a train m --resume";
    p.stop_line = "mlt ssh -h a stop m";
    return p;
}

// The standby side: host B behind its own link, handed out once.
class OneStandby : public mlt::Failover {
  public:
    OneStandby(mlt::ForwardingConnection& c, FakeJobHost& b, FakeHostConnection& link)
        : c_(c), b_(b), link_(link) {}
    std::optional<mlt::NextHost> next(mlt::Reporter&) override {
        ++asked;
        if (!available) return std::nullopt;
        available = false;
        c_.point_at(link_);
        return mlt::NextHost{b_.name(),
                             "/remote-b",
                             0.5,
                             "mlt ssh -h b train m --resume",
                             "mlt ssh -h b stop m",
                             &b_,
                             {},
                             {},
                             {}};
    }
    int asked = 0;
    bool available = true;

  private:
    mlt::ForwardingConnection& c_;
    FakeJobHost& b_;
    FakeHostConnection& link_;
};

// Host A, lost for good at its call `lost_at`; host B standing by.
struct FailoverRig {
    explicit FailoverRig(size_t lost_at, mlt::TrainPlan (*make)(const std::string&) = plan)
        : a("me@a:22"),
          b("me@b:22"),
          link_a(a),
          link_b(b),
          connection(link_a),
          standby(connection, b, link_b) {
        a.script.lines = {"epoch 1\n", "epoch 2\n", "epoch 3\n", "epoch 4\n"};
        b.script.lines = {"epoch 3 again\n", "epoch 4\n"};
        a.cut(lost_at, Cut::before);
        link_a.reachable = false;  // it never comes back
        fs::create_directories(dir.path() + "/logs");
        fs::create_directories(dir.path() + "/project");
        std::ofstream(dir.path() + "/project/m.py") << "spec\n";
        // Epoch 2's checkpoint comes home while A's job trains (--sync-every); an earlier
        // run's file beside it stays home.
        std::ofstream(dir.path() + "/logs/earlier-run.pt") << "not this run's\n";
        a.on_follow = [this](int) {
            std::ofstream(dir.path() + "/logs/ckpt-2.pt") << "weights of epoch 2\n";
        };
        p = make(dir.path());
    }
    int run() {
        mlt::TrainRun r(connection, a, p, rep, clock, nullptr, &standby);
        const int code = r.run();
        run_id = r.run_id();
        return code;
    }
    mlt::test::TempDir dir;
    FakeJobHost a, b;
    FakeHostConnection link_a, link_b;
    mlt::ForwardingConnection connection;
    OneStandby standby;
    ManualClock clock;
    mlt::test::CapturingReporter rep;
    mlt::TrainPlan p;
    std::string run_id;
};

TEST(Failover, AHostLostWhileFollowingContinuesOnTheStandbyAsAttempt2) {
    FailoverRig r(5);  // lock, upload, start, follow, follow: lost in the second follow
    EXPECT_EQ(r.run(), 0) << r.rep.alerts;
    EXPECT_EQ(r.standby.asked, 1);
    // A is left as it was: the lock of the run still there, the job started once.
    ASSERT_TRUE(r.a.lock_file.has_value());
    EXPECT_EQ(r.a.lock_file->run_id, r.run_id);
    EXPECT_EQ(r.a.launches, 1);
    // B ran the same run as attempt 2, once, and finished it.
    EXPECT_EQ(r.b.job_run_id, r.run_id);
    EXPECT_EQ(r.b.attempt, 2);
    EXPECT_EQ(r.b.launches, 1);
    EXPECT_EQ(r.b.collected_run, r.run_id);
    EXPECT_FALSE(r.b.lock_file.has_value());
    // What came home went up to B: the checkpoint into the job's restore dir, the console
    // copy as its console log; the workspace under B's remote dir.
    ASSERT_EQ(r.b.uploaded.count("/remote-b/.mlt/m/restore"), 1u);
    const auto& restore = r.b.uploaded.at("/remote-b/.mlt/m/restore");
    ASSERT_EQ(restore.size(), 1u);
    EXPECT_EQ(restore[0].remote_path, "ckpt-2.pt");
    EXPECT_EQ(r.b.uploaded.count("/remote-b"), 1u);
    EXPECT_EQ(r.b.uploaded.count("/remote-a"), 0u);
    // The console: A's lines once, the marker, B's lines once; the local copy is B's log.
    const std::string marker = "==== mlt: attempt 2 of run " + r.run_id +
                               " (continued on this host: the previous one was lost) ====\n";
    EXPECT_EQ(slurp(r.p.local_console), "epoch 1\n" + marker + "epoch 3 again\nepoch 4\n");
    EXPECT_EQ(slurp(r.p.local_console), r.b.console_log);
    EXPECT_NE(r.rep.alerts.find("continuing m (run " + r.run_id + ") on me@b:22 as attempt 2"),
              std::string::npos)
        << r.rep.alerts;
}

TEST(Failover, AHostLostBeforeTheStartBeginsTheRunOnTheStandbyAsAttempt1) {
    FailoverRig r(2);  // lost while uploading
    EXPECT_EQ(r.run(), 0) << r.rep.alerts;
    EXPECT_EQ(r.a.launches, 0);
    EXPECT_EQ(r.b.attempt, 1);
    EXPECT_EQ(r.b.launches, 1);
    EXPECT_EQ(r.b.console_log.find("==== mlt: attempt"), std::string::npos);
}

TEST(Failover, AHostLostAfterTheJobEndedIsNotFailedOver) {
    FailoverRig r(8);  // the job's end was followed; lost while collecting
    EXPECT_THROW(r.run(), mlt::Error);
    EXPECT_EQ(r.standby.asked, 0);
    EXPECT_EQ(r.b.launches, 0);
}

mlt::TrainPlan plan_without_failover(const std::string& local) {
    mlt::TrainPlan p = plan(local);
    p.failover = false;
    return p;
}

TEST(Failover, NoFailoverEndsTheRunAsALostLinkDoes) {
    FailoverRig r(5, plan_without_failover);
    try {
        r.run();
        ADD_FAILURE() << "the run went on";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.code(), mlt::exit_code::kConnection);
        EXPECT_NE(std::string(e.what()).find("gave up reconnecting"), std::string::npos);
    }
    EXPECT_EQ(r.standby.asked, 0);
}

TEST(Failover, WithoutAStandbyHostLeftTheRunEndsAsALostLinkDoes) {
    FailoverRig r(5);
    r.standby.available = false;
    EXPECT_THROW(r.run(), mlt::Error);
    EXPECT_EQ(r.standby.asked, 1);
    EXPECT_NE(r.rep.alerts.find("no standby host left"), std::string::npos) << r.rep.alerts;
}

TEST(StandbyHost, AHostSpecWithAnOptionalPrice) {
    const auto plain = mlt::parse_standby_host("root@gpu2:2222/work", "fallback_hosts entry 1");
    EXPECT_EQ(plain.spec.user, "root");
    EXPECT_EQ(plain.spec.host, "gpu2");
    EXPECT_EQ(plain.spec.port, 2222);
    EXPECT_EQ(plain.spec.remote_dir, "work");
    EXPECT_FALSE(plain.price_per_hour.has_value());
    const auto priced = mlt::parse_standby_host("  gpu3  price_per_hour=0.35 ", "x");
    EXPECT_EQ(priced.text, "gpu3");
    ASSERT_TRUE(priced.price_per_hour.has_value());
    EXPECT_DOUBLE_EQ(*priced.price_per_hour, 0.35);
    EXPECT_TRUE(priced.master_addr.empty());
    // A node of several may name its address for MASTER_ADDR, before or after the price.
    const auto node = mlt::parse_standby_host("gpu4 master_addr=10.0.0.7 price_per_hour=1", "x");
    EXPECT_EQ(node.master_addr, "10.0.0.7");
    ASSERT_TRUE(node.price_per_hour.has_value());
    EXPECT_DOUBLE_EQ(*node.price_per_hour, 1.0);
}

TEST(StandbyHost, BadEntriesAreUsageErrorsNamingWhere) {
    for (const char* bad : {"", "gpu price_per_hour=abc", "gpu price_per_hour=-1", "gpu 0.3",
                            "gpu price_per_hour=1 extra", "gpu:99999", "gpu price_per_hour=nan",
                            "gpu master_addr=", "gpu master_addr=a master_addr=b",
                            "gpu price_per_hour=1 price_per_hour=2"}) {
        try {
            mlt::parse_standby_host(bad, "fallback_hosts entry 2");
            ADD_FAILURE() << "accepted: " << bad;
        } catch (const mlt::Error& e) {
            EXPECT_EQ(e.code(), mlt::exit_code::kUsage) << bad;
            EXPECT_EQ(std::string(e.what()).rfind("fallback_hosts entry 2: ", 0), 0u) << e.what();
        }
    }
}

}  // namespace

TEST(Failover, AHostLeftBeforeTheStartIsNoAttemptInTheSummary) {
    FailoverRig r(2);  // lost while uploading
    EXPECT_EQ(r.run(), 0) << r.rep.alerts;
    EXPECT_NE(r.rep.notices.find("attempts: before the start on me@a:22"), std::string::npos)
        << r.rep.notices;
    EXPECT_EQ(r.rep.notices.find("#1 on me@a:22"), std::string::npos) << r.rep.notices;
    EXPECT_NE(r.rep.notices.find("#1 on me@b:22"), std::string::npos) << r.rep.notices;
}

mlt::TrainPlan plan_with_ten_seconds(const std::string& local) {
    mlt::TrainPlan p = plan(local);
    p.budget.max_hours = 10.0 / 3600;
    return p;
}

// The reconnect wait (20 s) outlasts the budget (10 s): no standby host is taken, and the
// run ends as a lost link does.
TEST(Failover, NoStandbyHostIsTakenOnceTheBudgetIsSpent) {
    FailoverRig r(5, plan_with_ten_seconds);
    EXPECT_THROW(r.run(), mlt::Error);
    EXPECT_EQ(r.standby.asked, 0);
    EXPECT_EQ(r.b.launches, 0);
    EXPECT_NE(r.rep.alerts.find("no standby host is taken: --max-hours"), std::string::npos)
        << r.rep.alerts;
}
