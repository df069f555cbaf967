// The guard's checkpoint ledger and retention (checkpoints.sh) under dash, BusyBox's sh and a
// host whose every tool is BusyBox's: which checkpoints stay, which are whole, what a pull in
// progress and odd names do.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "local_remote.h"
#include "mlt/config/rule_dialect.h"
#include "mlt/util/shell.h"
#include "remote_scripts.h"

namespace fs = std::filesystem;

namespace mlt {
namespace {

class Checkpoints : public ::testing::TestWithParam<std::string> {
  protected:
    void SetUp() override {
        std::string dir = (fs::temp_directory_path() / "mlt-checkpoints-XXXXXX").string();
        ASSERT_NE(mkdtemp(dir.data()), nullptr);
        dir_ = dir;
        fs::create_directories(dir_ + "/j");
        fs::create_directories(dir_ + "/logs/ck");
        write("j/log_dir", dir_ + "/logs\n");
    }
    void TearDown() override { fs::remove_all(dir_); }

    test::LocalShell shell() const {
        if (GetParam() != "busybox-only") return test::local_shell(GetParam());
        return test::shell_on_path("busybox-only", "busybox", {"sh"},
                                   {"awk", "cat", "date", "dd", "find", "head", "ls", "mkdir", "mv",
                                    "rm", "rmdir", "sed", "sleep", "sort", "stat", "tail", "tr"});
    }
    void settings(int keep_last, int best_n, const std::string& marker = "{name}.done",
                  const std::string& more = "") {
        write("j/checkpoints",
              "mlt-checkpoints 1\npattern=ck/*.pt\nkeep_last=" + std::to_string(keep_last) +
                  "\nbest_n=" + std::to_string(best_n) +
                  "\nbest_mode=min\nsettle=10\nmarker=" + marker + "\n" + more);
    }
    // The metric's latest value (mlt_ckpt_metric), as the guard reads it before a look.
    std::string metric() const {
        test::LocalRemote remote(shell());
        const auto out = remote.run("set -- " + shell_quote(dir_ + "/j") + "\n" +
                                    std::string(scripts::job_guard_rules) +
                                    std::string(scripts::job_checkpoints) +
                                    "\nmlt_ckpt_metric \"$1\"; printf '[%s]' \"$mlt_ck_v\"");
        EXPECT_EQ(out.err, "");
        return out.out;
    }
    // One look at NOW, the job ALIVE (1) or ENDED (1), the metric's latest value.
    void tick(long now, int alive, int ended, const std::string& metric = "") {
        test::LocalRemote remote(shell());
        const auto out = remote.run(
            "set -- " + shell_quote(dir_ + "/j") + " " + std::to_string(now) + " " +
            std::to_string(alive) + " " + std::to_string(ended) + " " + shell_quote(metric) + "\n" +
            std::string(scripts::job_checkpoints) + "\nmlt_ckpt_tick \"$@\"; echo \"status $?\"");
        EXPECT_EQ(out.out, "status 0\n") << out.err;
    }
    // A checkpoint of `size` bytes written at `mtime`.
    void save(const std::string& name, size_t size, long mtime) {
        write("logs/ck/" + name, std::string(size, 'w'));
        const std::string p = dir_ + "/logs/ck/" + name;
        struct utimbuf t {
            mtime, mtime
        };
        ASSERT_EQ(::utime(p.c_str(), &t), 0);
    }
    std::vector<std::string> left() const {
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(dir_ + "/logs/ck"))
            names.push_back(e.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }
    // "NAME WHOLE STATE;" for each line of the ledger, sorted.
    std::string ledger() const {
        std::ifstream in(dir_ + "/j/ckpt.ledger");
        std::vector<std::string> rows;
        for (std::string l; std::getline(in, l);) {
            std::vector<std::string> f;
            std::stringstream s(l);
            for (std::string x; std::getline(s, x, '\t');) f.push_back(x);
            if (f.size() == 7) rows.push_back(f[0] + " " + f[4] + " " + f[6]);
        }
        std::sort(rows.begin(), rows.end());
        std::string out;
        for (const auto& r : rows) out += r + ";";
        return out;
    }
    // What an attempt would start from (mlt_ckpt_pick): its lines joined by ';'.
    std::string pick() const {
        test::LocalRemote remote(shell());
        const auto out = remote.run(
            "set -- " + shell_quote(dir_ + "/j") + " " + shell_quote(dir_ + "/logs") + "\n" +
            std::string(scripts::job_checkpoints) + "\nmlt_ckpt_pick \"$@\" | sort | tr '\\n' ';'");
        EXPECT_EQ(out.err, "");
        return out.out;
    }
    void write(const std::string& name, const std::string& text) {
        std::ofstream(dir_ + "/" + name, std::ios::binary) << text;
    }
    std::string dir_;
};

TEST_P(Checkpoints, TheNewestAndTheBestStayAndTheRestGo) {
    settings(2, 1);
    const char* const metrics[] = {"0.9", "0.5", "0.7", "0.8", "0.6", "0.95"};
    for (int i = 1; i <= 6; ++i) {
        const long t = 1000 + i * 100;
        save("e" + std::to_string(i) + ".pt", 3, t);
        tick(t, 1, 0, metrics[i - 1]);
        tick(t + 11, 1, 0, metrics[i - 1]);  // unchanged for settle_seconds: whole
    }
    EXPECT_EQ(left(), (std::vector<std::string>{"e2.pt", "e5.pt", "e6.pt"}));
    EXPECT_EQ(ledger(),
              "ck/e1.pt 1 deleted;ck/e2.pt 1 kept;ck/e3.pt 1 deleted;ck/e4.pt 1 deleted;"
              "ck/e5.pt 1 kept;ck/e6.pt 1 kept;");
}

TEST_P(Checkpoints, OnlyWholeOnesGoAndNeverTheNewestWholeOne) {
    settings(1, 0);
    save("a.pt", 1, 1000);
    tick(1000, 1, 0);
    tick(1011, 1, 0);
    save("b.pt", 2, 1020);  // being written: changed at every look
    tick(1020, 1, 0);
    save("b.pt", 3, 1025);
    tick(1031, 1, 0);
    EXPECT_EQ(ledger(), "ck/a.pt 1 kept;ck/b.pt 0 kept;");
    // Its marker makes it whole: the older one goes, with its own marker.
    write("logs/ck/a.pt.done", "");
    write("logs/ck/b.pt.done", "");
    tick(1032, 1, 0);
    EXPECT_EQ(left(), (std::vector<std::string>{"b.pt", "b.pt.done"}));
    EXPECT_EQ(ledger(), "ck/a.pt 1 deleted;ck/b.pt 1 kept;");
}

TEST_P(Checkpoints, AnOlderMarkerOrAFailedEndMakesNothingWholeAndOnlyWholeOnesCount) {
    settings(1, 0);
    save("a.pt", 1, 1000);
    tick(1000, 1, 0);
    tick(1011, 1, 0);  // a.pt whole
    write("logs/ck/b.pt.done", "");
    struct utimbuf old {
        1001, 1001
    };
    ASSERT_EQ(::utime((dir_ + "/logs/ck/b.pt.done").c_str(), &old), 0);
    save("b.pt", 2, 1020);  // rewritten in place after its marker: the marker is the last save's
    tick(1020, 1, 0);
    EXPECT_EQ(ledger(), "ck/a.pt 1 kept;ck/b.pt 0 kept;");  // a.pt: the newest whole one
    // The job fails: b.pt is torn for good, and a restart in place does not let it settle.
    tick(1021, 0, 0);
    tick(1040, 1, 0);
    EXPECT_EQ(ledger(), "ck/a.pt 1 kept;ck/b.pt 2 kept;");
    // Once it changes it is a new version, which settles.
    save("b.pt", 3, 1041);
    tick(1041, 1, 0);
    tick(1052, 1, 0);
    EXPECT_EQ(ledger(), "ck/a.pt 1 deleted;ck/b.pt 1 kept;");
}

TEST_P(Checkpoints, APullInProgressHoldsTheDeletionsAndTheJobsEndMakesEveryOneWhole) {
    settings(1, 0, "");
    save("a.pt", 1, 1000);
    save("b.pt", 1, 1010);
    write("j/ckpt.pulling", "");
    tick(1010, 0, 1);
    EXPECT_EQ(left(), (std::vector<std::string>{"a.pt", "b.pt"}));
    fs::remove(dir_ + "/j/ckpt.pulling");
    tick(1011, 0, 1);
    EXPECT_EQ(left(), (std::vector<std::string>{"b.pt"}));
    EXPECT_EQ(ledger(), "ck/a.pt 1 deleted;ck/b.pt 1 kept;");
}

TEST_P(Checkpoints, NamesWithANewlineOrATabAreLeftAlone) {
    settings(1, 0, "");
    save("x.pt\ny.pt", 1, 1000);
    save("t\tab.pt", 1, 1001);
    save("z.pt", 1, 1100);
    tick(1200, 0, 1);
    EXPECT_EQ(left(), (std::vector<std::string>{"t\tab.pt", "x.pt\ny.pt", "z.pt"}));
}

TEST_P(Checkpoints, TheMetricIsTheLatestValueOnTheConsoleOrInItsFile) {
    const std::string rule = "metric=" + host_metric_line("val_loss[=:] *([0-9.eE+-]+)") + "\n";
    settings(0, 1, "", rule);
    EXPECT_EQ(metric(), "[]");  // no console yet
    write("j/console.log", "epoch 1 val_loss=0.5\nepoch 2 val_loss: 0.25 acc 0.9\nnone\n");
    EXPECT_EQ(metric(), "[0.25]");
    write("j/console.log",
          "epoch 1 val_loss=0.5\nepoch 2 val_loss: 0.25 acc 0.9\nnone\nval_loss=1e-3\n");
    EXPECT_EQ(metric(), "[1e-3]");
    // From a file of the log dir instead, in a state of its own.
    fs::remove_all(dir_ + "/j/ckpt.metric");
    settings(0, 1, "", rule + "metric_file=ck/metrics.csv\n");
    write("logs/ck/metrics.csv", "val_loss=7\nval_loss=6.5\n");
    EXPECT_EQ(metric(), "[6.5]");
}

// The seed mlt pushed with the checkpoints (--restore, a failover): each version it lists keeps
// what the earlier host knew of it (whole, never whole, the metric), even after a look that
// met the file still being copied; its deleted lines join the ledger's.
TEST_P(Checkpoints, TheSeedKeepsWhatTheEarlierHostKnewOfEachPushedVersion) {
    settings(1, 1, "");
    write("j/ckpt.seed",
          "ck/a.pt\t1\t1000\t1000\t1\t0.1\tkept\nck/b.pt\t2\t1010\t1010\t2\t\tkept\n"
          "ck/c.pt\t3\t1020\t1020\t1\t0.9\tkept\nck/old.pt\t5\t900\t900\t1\t0.05\tdeleted\n");
    save("a.pt", 1, 1000);
    save("b.pt", 2, 1010);
    save("c.pt", 1, 1030);  // being copied
    tick(1030, 1, 0, "0.5");
    EXPECT_EQ(ledger(), "ck/a.pt 1 kept;ck/b.pt 2 kept;ck/c.pt 0 kept;ck/old.pt 1 deleted;");
    save("c.pt", 3, 1020);  // copied, with its mtime
    tick(1031, 1, 0, "0.5");
    EXPECT_EQ(ledger(), "ck/a.pt 1 kept;ck/b.pt 2 kept;ck/c.pt 1 kept;ck/old.pt 1 deleted;");
    // A new one, whole: the newest stays, and a.pt as the best by the metric the seed gave it.
    save("d.pt", 4, 1040);
    tick(1040, 1, 0, "0.5");
    tick(1051, 1, 0, "0.5");
    EXPECT_EQ(left(), (std::vector<std::string>{"a.pt", "b.pt", "d.pt"}));
    EXPECT_EQ(
        ledger(),
        "ck/a.pt 1 kept;ck/b.pt 2 kept;ck/c.pt 1 deleted;ck/d.pt 1 kept;ck/old.pt 1 deleted;");
}

// MLT_CHECKPOINT: the newest whole one, by the ledger, else by the seed, else (neither: no look
// yet and nothing pushed) the newest; each newer one that is not whole is named.
TEST_P(Checkpoints, AnAttemptStartsFromTheNewestWholeOneByTheLedgerOrTheSeed) {
    settings(1, 0, "");
    save("a.pt", 1, 1000);
    save("b.pt", 2, 1010);
    EXPECT_EQ(pick(), "pick ck/b.pt;");
    write("j/ckpt.seed", "ck/a.pt\t1\t1000\t1000\t1\t\tkept\nck/b.pt\t2\t1010\t1010\t2\t\tkept\n");
    EXPECT_EQ(pick(), "pick ck/a.pt;torn ck/b.pt;");
    // The ledger lists b.pt in another version (a look while it was being copied): the seed's
    // line for this version decides.
    write("j/ckpt.ledger", "ck/b.pt\t1\t1030\t1030\t1\t\tkept\n");
    EXPECT_EQ(pick(), "pick ck/a.pt;torn ck/b.pt;");
    // The ledger alone: what it does not list in this version is not whole.
    fs::remove(dir_ + "/j/ckpt.seed");
    write("j/ckpt.ledger", "ck/a.pt\t1\t1000\t1000\t1\t\tkept\n");
    EXPECT_EQ(pick(), "pick ck/a.pt;torn ck/b.pt;");
    write("j/ckpt.ledger", "ck/b.pt\t2\t1010\t1000\t1\t\tkept\n");
    EXPECT_EQ(pick(), "pick ck/b.pt;");
    // A deleted line of the name (another version, deleted there) says nothing of this one.
    write("j/ckpt.ledger",
          "ck/b.pt\t2\t1010\t1000\t1\t\tkept\nck/b.pt\t9\t1015\t1015\t1\t\tdeleted\n");
    EXPECT_EQ(pick(), "pick ck/b.pt;");
    save("c.pt", 1, 1020);  // newer, unknown; no whole one older than it would be named either
    fs::remove(dir_ + "/j/ckpt.ledger");
    write("j/ckpt.seed", "ck/c.pt\t1\t1020\t1020\t2\t\tkept\n");
    EXPECT_EQ(pick(), "torn ck/a.pt;torn ck/b.pt;torn ck/c.pt;");
}

// The looks' lock and the look after the end (mlt_ckpt_final): a guard's look does not wait for
// a live look's lock; a dead look's lock is taken; the guard's or a pull's look after the end
// (ENDED) is skipped once a restart moved the status aside; with no checkpoint yet it writes an
// empty ledger and ckpt.final (a collection waits for it).
TEST_P(Checkpoints, TheLooksTakeTurnsAndTheEndsLookIsTakenOnce) {
    settings(1, 0, "");
    const auto run = [&](const std::string& call) {
        test::LocalRemote remote(shell());
        const auto out = remote.run(
            "set -- " + shell_quote(dir_ + "/j") + "\n" + std::string(scripts::job_guard_rules) +
            std::string(scripts::job_checkpoints) + "\n" + call + "; echo \"status $?\"");
        return out.out + out.err;
    };
    fs::create_directory(dir_ + "/j/ckpt.lock");
    write("j/ckpt.lock/owner", std::to_string(::getpid()) + "\n");  // this test: alive
    EXPECT_EQ(run("mlt_ckpt_look \"$1\" 2000"), "status 1\n");
    EXPECT_FALSE(fs::exists(dir_ + "/j/ckpt.ledger"));
    write("j/ckpt.lock/owner", "999999999\n");  // no such process: a dead look's
    EXPECT_EQ(run("mlt_ckpt_final \"$1\" 2000 ended"), "status 0\n");
    EXPECT_FALSE(fs::exists(dir_ + "/j/ckpt.final"));  // no exit status: a restart's
    EXPECT_FALSE(fs::exists(dir_ + "/j/ckpt.lock"));
    write("j/exit_status", "0\n");
    EXPECT_EQ(run("mlt_ckpt_final \"$1\" 2000 ended"), "status 0\n");
    EXPECT_TRUE(fs::exists(dir_ + "/j/ckpt.final"));
    EXPECT_TRUE(fs::exists(dir_ + "/j/ckpt.ledger"));
    EXPECT_EQ(ledger(), "");
    EXPECT_FALSE(fs::exists(dir_ + "/j/ckpt.lock"));
}

// What a pull reads (ckpt_ledger.sh): before the guard's first look it is told that none is
// known to be whole yet (and leaves them all), and the pull's hold is set; with a ledger, its
// kept lines come first.
TEST_P(Checkpoints, APullReadsTheLedgerOrLearnsThatThereIsNoneYet) {
    const auto read = [&] {
        test::LocalRemote remote(shell());
        const auto out = remote.run("j=" + shell_quote(dir_ + "/j") + "\nmlt_hold=1\n" +
                                    std::string(scripts::job_guard_rules) +
                                    std::string(scripts::job_checkpoints) +
                                    std::string(scripts::job_ckpt_ledger));
        EXPECT_EQ(out.err, "");
        return out.out;
    };
    EXPECT_EQ(read(), "");  // no checkpoints in this run
    settings(1, 0, "");
    EXPECT_EQ(read(), "no ledger yet\n");
    EXPECT_TRUE(fs::exists(dir_ + "/j/ckpt.pulling"));
    write("j/ckpt.ledger", "ck/a.pt\t1\t1\t1\t1\t\tdeleted\nck/b.pt\t1\t2\t2\t1\t\tkept\n");
    EXPECT_EQ(read(), "ledger\nck/b.pt\t1\t2\t2\t1\t\tkept\nck/a.pt\t1\t1\t1\t1\t\tdeleted\n");
}

TEST_P(Checkpoints, NoSettingsNothingDone) {
    save("a.pt", 1, 1000);
    tick(1000, 1, 0);
    EXPECT_FALSE(fs::exists(dir_ + "/j/ckpt.ledger"));
}

INSTANTIATE_TEST_SUITE_P(Hosts, Checkpoints,
                         ::testing::Values(std::string("dash"), std::string("busybox"),
                                           std::string("busybox-only")),
                         [](const ::testing::TestParamInfo<std::string>& host) {
                             std::string name = host.param;
                             name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
                             return name;
                         });

}  // namespace
}  // namespace mlt
