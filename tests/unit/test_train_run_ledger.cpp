// RunLedger: the time and cost of a run over its attempts and hosts, on a clock the test
// sets; the summary block and the history's table built from it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "mlt/train/cost/run_ledger.h"
#include "mlt/train/local/history.h"
#include "mlt/train/run/run_summary.h"

namespace {

constexpr double kT0 = 1'800'000'000;  // some epoch second

TEST(RunLedger, EmptyKnowsNothing) {
    mlt::RunLedger l;
    EXPECT_TRUE(l.empty());
    EXPECT_EQ(l.elapsed(kT0), 0);
    EXPECT_FALSE(l.cost(kT0).has_value());
    EXPECT_EQ(l.seconds_left({1, 1}, kT0), 3600) << "no time passed yet";
    EXPECT_GT(l.seconds_left({0, 0}, kT0), 1e9) << "no limit";
    EXPECT_EQ(l.limit_reached({0, 0}, kT0), "");
}

TEST(RunLedger, OneAttemptCountsFromItsStart) {
    mlt::RunLedger l;
    l.begin_attempt(1, "gpu1", 3.60, kT0);
    EXPECT_DOUBLE_EQ(l.elapsed(kT0 + 600), 600);
    EXPECT_DOUBLE_EQ(*l.cost(kT0 + 600), 0.60);  // 10 minutes at $3.60/h
    EXPECT_DOUBLE_EQ(l.current_price(), 3.60);
    l.end_attempt("success", kT0 + 900);
    EXPECT_DOUBLE_EQ(l.elapsed(kT0 + 5000), 900) << "an ended run stops counting";
    EXPECT_DOUBLE_EQ(*l.cost(kT0 + 5000), 0.90);
    EXPECT_EQ(l.attempts().at(0).how, "success");
    l.end_attempt("again", kT0 + 2000);
    EXPECT_EQ(l.attempts().at(0).how, "success") << "an ended attempt stays as it ended";
}

TEST(RunLedger, SeveralAttemptsOnHostsWithTheirOwnPrices) {
    mlt::RunLedger l;
    l.begin_attempt(1, "gpu1", 1.20, kT0);
    l.end_attempt("lost", kT0 + 1800);             // 30 min at 1.20: 0.60
    l.begin_attempt(2, "gpu1", 1.20, kT0 + 1900);  // restarted in place
    l.begin_attempt(3, "gpu2", 0.60, kT0 + 3700);  // moved: ends attempt 2 (0.60)
    ASSERT_EQ(l.attempts().size(), 3u);
    EXPECT_EQ(l.attempts()[1].how, "moved");
    EXPECT_DOUBLE_EQ(*l.attempts()[1].end, kT0 + 3700);
    EXPECT_DOUBLE_EQ(l.elapsed(kT0 + 7300), 7300) << "from the first start, gaps included";
    EXPECT_NEAR(*l.cost(kT0 + 7300), 0.60 + 0.60 + 0.60, 1e-9);  // then 1 h at 0.60
    EXPECT_DOUBLE_EQ(l.current_price(), 0.60);
    EXPECT_DOUBLE_EQ(l.started(), kT0);
}

TEST(RunLedger, AHostWithoutAPriceCountsNothing) {
    mlt::RunLedger l;
    l.begin_attempt(1, "free", 0, kT0);
    EXPECT_FALSE(l.cost(kT0 + 3600).has_value());
    l.begin_attempt(2, "paid", 2, kT0 + 3600);
    EXPECT_DOUBLE_EQ(*l.cost(kT0 + 5400), 1.0);
}

TEST(RunLedger, LimitsAndTheTimeLeftToThem) {
    mlt::RunLedger l;
    l.begin_attempt(1, "gpu1", 3600, kT0);  // $1 a second
    const mlt::Budget hours{0.5, 0};
    EXPECT_DOUBLE_EQ(l.seconds_left(hours, kT0 + 600), 1200);
    EXPECT_EQ(l.limit_reached(hours, kT0 + 1799), "");
    EXPECT_EQ(l.limit_reached(hours, kT0 + 1800), "--max-hours 0.5");
    const mlt::Budget cost{0, 10};
    EXPECT_DOUBLE_EQ(l.seconds_left(cost, kT0 + 4), 6);
    EXPECT_EQ(l.limit_reached(cost, kT0 + 9), "");
    EXPECT_EQ(l.limit_reached(cost, kT0 + 10), "--max-cost 10");
    EXPECT_LE(l.seconds_left(cost, kT0 + 11), 0);
    // Both: the nearer one counts.
    EXPECT_DOUBLE_EQ(l.seconds_left({0.5, 10}, kT0), 10);
    EXPECT_DOUBLE_EQ(l.seconds_left({0.001, 10}, kT0), 3.6);
}

TEST(RunLedger, AStartAheadOfTheClockCountsNoNegativeTime) {
    mlt::RunLedger l;
    l.begin_attempt(1, "h", 1, kT0 + 100);  // a remote clock ahead of ours
    EXPECT_EQ(l.elapsed(kT0), 0);
    EXPECT_EQ(*l.cost(kT0), 0);
    l.end_attempt("failed", kT0);
    EXPECT_EQ(*l.attempts()[0].end, kT0 + 100);
}

mlt::RunSummary summary() {
    mlt::RunSummary s;
    s.model = "m";
    s.run_id = "r1";
    s.status = "stopped by --max-hours 1 (reached after 1h00m00s): m finished with exit status 143";
    s.exit_code = 5;
    mlt::RunLedger l;
    l.begin_attempt(1, "gpu1", 1.20, kT0);
    l.end_attempt("lost", kT0 + 1800);
    l.begin_attempt(2, "gpu2", 0.60, kT0 + 1800);
    l.end_attempt("limit", kT0 + 3600);
    s.attempts = l.attempts();
    s.duration_s = l.elapsed(kT0 + 3600);
    s.cost = l.cost(kT0 + 3600);
    s.archive = "/p/m.mltk.zip";
    s.logs = "/h/.mltk/models/m";
    s.console = "/h/.mltk/models/m/mltk_ssh_train_m.log";
    s.billing_host = "gpu2";
    return s;
}

TEST(RunSummary, SaysStatusAttemptsTimeCostResultsAndReminder) {
    const auto lines = mlt::summary_lines(summary());
    const std::vector<std::string> expected = {
        "summary of run r1 of m: stopped by --max-hours 1 (reached after 1h00m00s): m finished "
        "with exit status 143 (exit 5)",
        "  attempts: #1 on gpu1 at $1.20/h, 30m00s, lost; #2 on gpu2 at $0.60/h, 30m00s, limit",
        "  time: 1h00m00s; cost: $0.90",
        "  archive: /p/m.mltk.zip",
        "  logs: /h/.mltk/models/m (console log: /h/.mltk/models/m/mltk_ssh_train_m.log)",
        "  reminder: the remote machine gpu2 may still be billing: stop or destroy it when you "
        "are done"};
    EXPECT_EQ(lines, expected);
}

TEST(RunSummary, WithoutPriceResultsOrReminder) {
    mlt::RunSummary s = summary();
    s.cost.reset();
    s.archive.clear();
    s.logs.clear();
    s.collect_hint = "still on the remote; collect them with: mlt ssh train m --resume";
    s.billing_host.clear();
    const auto lines = mlt::summary_lines(s);
    ASSERT_EQ(lines.size(), 5u);
    EXPECT_EQ(lines[2], "  time: 1h00m00s; cost: not known (no --price or price_per_hour)");
    EXPECT_EQ(lines[3], "  console log: /h/.mltk/models/m/mltk_ssh_train_m.log");
    EXPECT_EQ(lines[4],
              "  results: still on the remote; collect them with: mlt ssh train m --resume");
}

TEST(RunSummary, DetachedReminderWaitsForTheCollection) {
    EXPECT_EQ(mlt::billing_reminder("h", true),
              "reminder: the remote machine h may still be billing: once the run is collected, "
              "stop or destroy it when you are done");
}

TEST(History, RecordsTheLedgerAndShowsAttemptsAndCost) {
    mlt::RunLedger l;
    l.begin_attempt(1, "gpu1", 3.60, kT0);
    l.end_attempt("lost", kT0 + 600);
    l.begin_attempt(2, "gpu1", 3.60, kT0 + 600);
    l.begin_attempt(3, "gpu2", 0, kT0 + 1200);
    nlohmann::json r = {{"id", "r1"}, {"model", "m"}, {"status", "running"}, {"attempt", 3}};
    mlt::add_ledger(r, l, kT0 + 1800);
    EXPECT_EQ(r["hosts"], nlohmann::json({"gpu1", "gpu2"}));
    ASSERT_EQ(r["attempts"].size(), 3u);
    EXPECT_EQ(r["attempts"][0]["how"], "lost");
    EXPECT_EQ(r["attempts"][0]["end"], mlt::iso_time(static_cast<std::time_t>(kT0 + 600)));
    EXPECT_TRUE(r["attempts"][2]["end"].is_null());
    EXPECT_DOUBLE_EQ(r["attempts"][1]["cost"].get<double>(), 0.60);
    EXPECT_DOUBLE_EQ(r["cost"].get<double>(), 1.20);
    EXPECT_EQ(r["duration_s"], 1800);
    const std::string table = mlt::format_history({r}, 0);
    EXPECT_NE(table.find("ATTEMPTS"), std::string::npos) << table;
    EXPECT_NE(table.find(" 3 "), std::string::npos) << table;
    EXPECT_NE(table.find("$1.20"), std::string::npos) << table;
    EXPECT_NE(table.find("gpu1,gpu2"), std::string::npos) << table;
    // An old record without cost or attempts: dashes.
    const std::string old = mlt::format_history({{{"id", "r0"}, {"model", "m"}}}, 0);
    EXPECT_EQ(old.find("$"), std::string::npos) << old;
}

TEST(History, ARunIdFromARemoteLockIsShownEscaped) {
    // --resume adopts the run id the remote's lock holds, and records it.
    const std::string table =
        mlt::format_history({{{"id", "r\x1b]0;title\x07"}, {"model", "m"}, {"hosts", "h"}}}, 0);
    EXPECT_EQ(table.find('\x1b'), std::string::npos) << table;
    EXPECT_NE(table.find("r\\x1b]0;title\\x07 "), std::string::npos) << table;
}

TEST(History, AnEmptyLedgerAddsNothing) {
    nlohmann::json r = {{"cost", nullptr}};
    mlt::add_ledger(r, mlt::RunLedger{}, kT0);
    EXPECT_EQ(r, nlohmann::json({{"cost", nullptr}}));
}

}  // namespace

namespace {

nlohmann::json attempt_on(const std::string& host, const std::string& how) {
    return {{"host", host}, {"how", how}};
}

}  // namespace

TEST(History, ARunThatFailedOverIsSaidToHaveMovedAwayFromTheLostHost) {
    const std::vector<nlohmann::json> runs = {
        {{"id", "r1"}, {"attempts", {attempt_on("a:22", "")}}},
        {{"id", "r1"},
         {"attempts", {attempt_on("a:22", "host lost"), attempt_on("b:22", "success")}}},
        {{"id", "r2"}, {"attempts", {attempt_on("a:22", "lost"), attempt_on("a:22", "success")}}},
    };
    EXPECT_EQ(mlt::moved_away_from(runs, "r1", "a:22"), std::optional<std::string>("b:22"));
    EXPECT_FALSE(mlt::moved_away_from(runs, "r1", "b:22").has_value());  // where it went on
    EXPECT_FALSE(mlt::moved_away_from(runs, "r2", "a:22").has_value());  // restarted in place
    EXPECT_FALSE(mlt::moved_away_from(runs, "r3", "a:22").has_value());  // not in the history
    // Only the run's newest record counts: an older one that moved away does not.
    const std::vector<nlohmann::json> back = {
        runs[1], {{"id", "r1"}, {"attempts", {attempt_on("a:22", "success")}}}};
    EXPECT_FALSE(mlt::moved_away_from(back, "r1", "a:22").has_value());
}

// A --resume that adopts attempt 2 on B keeps attempt 1 on A from the history: its time, its
// price and how it ended (an attempt the record has as open ended when attempt 2 began).
TEST(History, AResumeKeepsTheEarlierAttemptsOfTheRun) {
    const nlohmann::json a1 = {{"attempt", 1},
                               {"host", "a:22"},
                               {"start", "2026-11-28T10:00:00Z"},
                               {"end", "2026-11-28T11:00:00Z"},
                               {"how", "host lost"},
                               {"price_per_hour", 2.0}};
    const nlohmann::json open1 = {
        {"attempt", 1}, {"host", "a:22"}, {"start", "2026-11-28T10:00:00Z"}, {"end", nullptr}};
    const nlohmann::json b2 = {
        {"attempt", 2}, {"host", "b:22"}, {"start", "2026-11-28T11:00:05Z"}, {"end", nullptr}};
    const std::vector<nlohmann::json> runs = {
        {{"id", "r1"}, {"attempts", {a1, b2}}},
        {{"id", "r2"}, {"attempts", {open1, b2}}},
    };
    const double until = static_cast<double>(*mlt::parse_iso_time("2026-11-28T11:00:05Z"));
    auto kept = mlt::earlier_attempts(runs, "r1", 2, until);
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_EQ(kept[0].host, "a:22");
    EXPECT_EQ(kept[0].how, "host lost");
    EXPECT_EQ(*kept[0].end - kept[0].start, 3600);
    mlt::RunLedger ledger;
    ledger.restore(kept);
    ledger.begin_attempt(2, "b:22", 0, until);
    EXPECT_EQ(ledger.attempts().size(), 2u);
    EXPECT_DOUBLE_EQ(*ledger.cost(until), 2.0);
    EXPECT_DOUBLE_EQ(ledger.elapsed(until), 3605);
    kept = mlt::earlier_attempts(runs, "r2", 2, until);
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_EQ(*kept[0].end, until);
    EXPECT_EQ(kept[0].how, "left");
    EXPECT_TRUE(mlt::earlier_attempts(runs, "r1", 1, until).empty());  // the adopted one is not
    EXPECT_TRUE(mlt::earlier_attempts(runs, "r3", 2, until).empty());  // not in the history
    EXPECT_FALSE(mlt::parse_iso_time("2026-11-28 10:00:00").has_value());
}

// A host the run left before its job started there is no attempt: the next host's start is
// still #1, and the summary never shows two #1.
TEST(RunSummary, AHostLeftBeforeTheStartIsNoAttempt) {
    mlt::RunSummary s = summary();
    mlt::RunLedger l;
    l.begin_attempt(1, "gpu1", 0, kT0);
    l.end_attempt("host lost", kT0 + 60);
    l.renumber_last(0);
    l.begin_attempt(1, "gpu2", 0, kT0 + 60);
    l.end_attempt("success", kT0 + 120);
    s.attempts = l.attempts();
    const auto lines = mlt::summary_lines(s);
    EXPECT_EQ(lines[1],
              "  attempts: before the start on gpu1, 1m00s, host lost; #1 on gpu2, "
              "1m00s, success");
}

// A failover cut off by a killed mlt: the model's newest run ended its last attempt as
// "host lost" on another host, and nothing came after; it continues as the next attempt
// (as attempt 1 when no job had started: the lost host's attempt is numbered 0).
TEST(History, AFailoverCutOffIsFoundOnlyWhereItWasGoing) {
    const auto run = [](const std::string& id, const std::string& status, int number,
                        const std::string& host, const std::string& how) {
        return nlohmann::json{{"id", id},
                              {"model", "m"},
                              {"status", status},
                              {"attempts", {{{"attempt", number}, {"host", host}, {"how", how}}}}};
    };
    const std::vector<nlohmann::json> cut = {run("r1", "host lost", 1, "a:22", "host lost")};
    const auto found = mlt::cut_failover(cut, "m", "b:22");
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->run_id, "r1");
    EXPECT_EQ(found->from, "a:22");
    EXPECT_EQ(found->attempt, 2);
    EXPECT_EQ(
        mlt::cut_failover({run("r1", "host lost", 0, "a:22", "host lost")}, "m", "b:22")->attempt,
        1);
    EXPECT_FALSE(mlt::cut_failover(cut, "m", "a:22").has_value());      // the lost host itself
    EXPECT_FALSE(mlt::cut_failover(cut, "other", "b:22").has_value());  // another model
    // A newer run of the model, or a run that went on after the loss: nothing is cut off.
    EXPECT_FALSE(
        mlt::cut_failover({cut[0], run("r2", "success", 1, "a:22", "success")}, "m", "b:22")
            .has_value());
    EXPECT_FALSE(mlt::cut_failover({run("r1", "running", 1, "a:22", "")}, "m", "b:22").has_value());
}

// What a --resume on a host that does not answer may wait for: the model's newest run, when
// its last attempt is on that host and the run has not ended.
TEST(History, AnUnfinishedRunIsFoundOnTheHostOfItsLastAttempt) {
    const auto run = [](const std::string& id, const std::string& status, const std::string& host) {
        return nlohmann::json{
            {"id", id},
            {"model", "m"},
            {"status", status},
            {"attempts", {{{"attempt", 2}, {"host", host}, {"start", "2026-11-28T10:00:00Z"}}}}};
    };
    const auto found = mlt::unfinished_run_on({run("r1", "running", "a:22")}, "m", "a:22");
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->run_id, "r1");
    EXPECT_EQ(found->attempt, 2);
    EXPECT_EQ(found->start, static_cast<double>(*mlt::parse_iso_time("2026-11-28T10:00:00Z")));
    for (const char* status : {"link lost", "host lost", "detached"})
        EXPECT_TRUE(mlt::unfinished_run_on({run("r1", status, "a:22")}, "m", "a:22")) << status;
    for (const char* status : {"success", "failed", "stopped", "limit", "taken over"})
        EXPECT_FALSE(mlt::unfinished_run_on({run("r1", status, "a:22")}, "m", "a:22")) << status;
    EXPECT_FALSE(mlt::unfinished_run_on({run("r1", "running", "b:22")}, "m", "a:22"));
    EXPECT_FALSE(mlt::unfinished_run_on({run("r1", "running", "a:22")}, "other", "a:22"));
    // Only the newest run of the model counts.
    EXPECT_FALSE(mlt::unfinished_run_on(
        {run("r1", "running", "a:22"), run("r2", "success", "a:22")}, "m", "a:22"));
}

namespace {

// The hosts a watch.on_failure rule marked bad: each run's marks once (its records repeat
// them), only those not expired, and printable.
TEST(History, ExcludedHostsAreEachRunsNewestMarksNotExpired) {
    const std::vector<mlt::ExcludedHost> marks = {{"root@a:22", 2000, "rule 1\x1b[2J", "r1", true},
                                                  {"root@b:22", 900, "rule 2", "r1", false}};
    nlohmann::json first = {{"id", "r1"}, {"excluded_hosts", mlt::excluded_json({marks[0]})}};
    nlohmann::json second = {{"id", "r1"}, {"excluded_hosts", mlt::excluded_json(marks)}};
    nlohmann::json other = {{"id", "r2"}, {"excluded_hosts", "not a list"}};
    const auto bad = mlt::excluded_hosts({first, second, other}, 1000);
    ASSERT_EQ(bad.size(), 1u);
    EXPECT_EQ(bad[0].host, "root@a:22");
    EXPECT_EQ(bad[0].run_id, "r1");
    EXPECT_EQ(bad[0].until, 2000);
    EXPECT_EQ(mlt::format_excluded(bad),
              "root@a:22 is marked bad until 1970-01-01T00:33:20Z (run r1): rule 1\\x1b[2J\n");
    EXPECT_TRUE(mlt::excluded_hosts({first, second}, 2000).empty());
}

}  // namespace
