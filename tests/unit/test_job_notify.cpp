// A run's notification events (include/mlt/job/notify.h): the id, the JSON with exactly the
// issue's fields, the body of each format, the same bytes from notify_send.sh's awk under dash and
// BusyBox, and LocalNotifier: each event once from this machine, notify_cmd fed its JSON.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "http_receiver.h"
#include "mlt/job/notify.h"
#include "mlt/util/paths.h"
#include "notify_fixture.h"

namespace {

using mlt::NotifyEvent;
using mlt::NotifyEventKind;
using mlt::NotifyFormat;

TEST(NotifyEvent, TheIdIsTheSameForTheSameRunAttemptAndEventOnly) {
    NotifyEvent e = mlt::test::sample_event();
    EXPECT_EQ(mlt::notify_event_id(e), "20240501-120000-ab12.2.finished");
    NotifyEvent later = e;
    later.duration_s += 100;
    later.last_lines.push_back("more");
    later.reason = "other words";
    EXPECT_EQ(mlt::notify_event_id(later), mlt::notify_event_id(e));
    later.attempt = 3;
    EXPECT_NE(mlt::notify_event_id(later), mlt::notify_event_id(e));
    e.event = NotifyEventKind::unattended_shutdown;
    EXPECT_EQ(mlt::notify_event_id(e), "20240501-120000-ab12.2.unattended_shutdown");
}

TEST(NotifyEvent, EachFormatHasItsBody) {
    NotifyEvent e = mlt::test::sample_event();
    EXPECT_EQ(mlt::notify_event_json(e),
              R"({"id":"20240501-120000-ab12.2.finished","event":"finished","model":"mnist",)"
              R"("run_id":"20240501-120000-ab12","attempt":2,"host":"root@gpu.example.com:22",)"
              R"("reason":"","exit_status":0,"duration_s":3725,"cost":1.5000,)"
              R"("last_lines":["epoch 9","epoch 10 loss=0.01","done"]})");
    EXPECT_EQ(mlt::notify_body(e, NotifyFormat::json), mlt::notify_event_json(e));
    EXPECT_EQ(mlt::notify_title(e), "mlt: mnist finished");
    EXPECT_EQ(mlt::notify_body(e, NotifyFormat::ntfy),
              "mnist finished on root@gpu.example.com:22\n"
              "run 20240501-120000-ab12, attempt 2, exit status 0, 1h 02m, $1.50\n\n"
              "epoch 9\nepoch 10 loss=0.01\ndone");
    e.event = NotifyEventKind::stopped;
    e.reason = "--max-hours 2 <reached> & stopped";
    e.exit_status.reset();
    e.cost.reset();
    e.duration_s = 125;
    e.last_lines = {};
    EXPECT_EQ(mlt::notify_body(e, NotifyFormat::slack),
              R"({"text":"*mlt: mnist stopped*\nmnist stopped on root@gpu.example.com:22: )"
              R"(--max-hours 2 &lt;reached&gt; &amp; stopped\nrun 20240501-120000-ab12, )"
              R"(attempt 2, 2m 05s"})");
    EXPECT_EQ(mlt::notify_body(e, NotifyFormat::ntfy),
              "mnist stopped on root@gpu.example.com:22: --max-hours 2 <reached> & stopped\n"
              "run 20240501-120000-ab12, attempt 2, 2m 05s");
}

// The JSON has exactly the issue's fields and the id; unknown numbers are null; of many lines
// the last 10 go, each made safe (valid UTF-8, no control bytes, a progress bar's last state).
TEST(NotifyEvent, TheJsonHoldsExactlyTheFieldsAndSafeText) {
    NotifyEvent e = mlt::test::sample_event();
    e.event = NotifyEventKind::failed;
    e.exit_status = -9;
    e.cost.reset();
    e.reason = "a\ttab, a \"quote\", a \\ and \x01";
    e.last_lines.clear();
    for (int i = 0; i < 14; ++i) e.last_lines.push_back("line " + std::to_string(i));
    e.last_lines.push_back("10%\r50%\r100%\r\n");
    e.last_lines.push_back("caf\xc3\xa9 \xff\xc3 end");
    e.last_lines.push_back(std::string(400, 'x'));
    const auto j = nlohmann::json::parse(mlt::notify_event_json(e));
    std::vector<std::string> keys;
    for (const auto& item : j.items()) keys.push_back(item.key());
    EXPECT_EQ(keys,
              (std::vector<std::string>{"attempt", "cost", "duration_s", "event", "exit_status",
                                        "host", "id", "last_lines", "model", "reason", "run_id"}));
    EXPECT_EQ(j["exit_status"], -9);
    EXPECT_TRUE(j["cost"].is_null());
    EXPECT_EQ(j["reason"], "a tab, a \"quote\", a \\ and ?");
    ASSERT_EQ(j["last_lines"].size(), 10u);
    EXPECT_EQ(j["last_lines"][0], "line 7");
    EXPECT_EQ(j["last_lines"][7], "100%");
    EXPECT_EQ(j["last_lines"][8], "caf\xc3\xa9 ?? end");
    EXPECT_EQ(j["last_lines"][9], std::string(300, 'x'));
}

// The host's guard has no C++: notify_send.sh builds the bodies from the event dir's files with
// awk. Both must give the same bytes, under dash (mawk) and BusyBox (its awk).
class NotifyBodies : public ::testing::TestWithParam<std::string> {};

std::vector<NotifyEvent> parity_events() {
    std::vector<NotifyEvent> out{mlt::test::sample_event()};
    NotifyEvent odd = mlt::test::sample_event();
    odd.event = NotifyEventKind::unattended_shutdown;
    odd.model = "m\"o\\d&<el>";
    odd.host = "r\xc3\xb6ot@h\xe2\x82\xac:2222\n";
    odd.reason = "\ttabbed\x7f\x1b[31mred\r over";
    odd.exit_status.reset();
    odd.cost = 0.004999;  // awk rounds the 4-decimal text it reads back
    odd.duration_s = 59;
    // 5 lines, then 8 odd ones: the last 10 hold all the odd ones.
    for (int i = 0; i < 5; ++i) odd.last_lines.push_back("head " + std::to_string(i) + " \t&");
    for (const std::string line :
         {"", "\xe2\x82", "\xf0\x9f\x98\x80 ok", "a\rb\r", "x\ny", "\xc0\xaf\xed\xa0\x80"})
        odd.last_lines.push_back(line);
    odd.last_lines.push_back(std::string(299, 'y') + "\xc3\xa9");  // cut inside the é
    out.push_back(odd);
    NotifyEvent bare;
    bare.event = NotifyEventKind::host_lost;
    bare.duration_s = 3600;
    bare.cost = 12345.678;
    out.push_back(bare);
    return out;
}

TEST_P(NotifyBodies, TheScriptsAwkGivesTheSameBytes) {
    mlt::test::NotifyFixture f(GetParam(), mlt::test::Client::none);
    for (const NotifyEvent& e : parity_events()) {
        f.write_event(e);
        const std::string ev = f.dir() + "/ev";
        EXPECT_EQ(f.run({"body", "id", ev}).output, mlt::notify_event_id(e) + "\n");
        EXPECT_EQ(f.run({"body", "title", ev}).output, mlt::notify_title(e) + "\n");
        for (NotifyFormat format : {NotifyFormat::json, NotifyFormat::ntfy, NotifyFormat::slack})
            EXPECT_EQ(f.run({"body", mlt::notify_format_name(format), ev}).output,
                      mlt::notify_body(e, format) + "\n")
                << mlt::notify_format_name(format) << " of " << mlt::notify_event_json(e);
    }
}

std::string shell_name(const ::testing::TestParamInfo<std::string>& p) {
    return p.param;
}

INSTANTIATE_TEST_SUITE_P(Shells, NotifyBodies, ::testing::Values("dash", "busybox"), shell_name);

TEST(NotifyFiles, TheTargetsFileHoldsOneFormatAndUrlALine) {
    EXPECT_EQ(mlt::notify_targets_text({{"https://ntfy.sh/a", NotifyFormat::ntfy},
                                        {"http://127.0.0.1:9/h", NotifyFormat::json}}),
              "ntfy https://ntfy.sh/a\njson http://127.0.0.1:9/h\n");
    NotifyEvent e = mlt::test::sample_event();
    e.reason = "two\nlines";
    e.exit_status.reset();
    EXPECT_EQ(mlt::notify_fields_text(e),
              "event=finished\nmodel=mnist\nrun_id=20240501-120000-ab12\nattempt=2\n"
              "host=root@gpu.example.com:22\nreason=two?lines\nexit_status=\nduration_s=3725\n"
              "cost=1.5000\n");
}

// LocalNotifier on this machine (its curl): one request per target and one notify_cmd per event
// id, and nothing the second time, across notifier objects (a --resume).
class LocalNotifierTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/mlt-local-notify-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    mlt::LocalNotifier::Options options(const mlt::test::HttpReceiver& receiver) const {
        mlt::LocalNotifier::Options o;
        o.targets = {{receiver.url("/a/SECRET"), NotifyFormat::json},
                     {receiver.url("/b/SECRET"), NotifyFormat::ntfy}};
        o.notify_cmd = "cat >> '" + dir_ + "/events.jsonl'; echo >> '" + dir_ + "/events.jsonl'";
        o.sent_file = dir_ + "/state/notify.sent";
        o.log_file = dir_ + "/logs/notify.log";
        o.timing = {2, 0, 10};
        return o;
    }
    std::string read(const std::string& rel) const {
        return std::filesystem::exists(dir_ + "/" + rel) ? mlt::read_file(dir_ + "/" + rel) : "";
    }
    std::string dir_;
};

TEST_F(LocalNotifierTest, SendsEachEventOnceAndFeedsNotifyCmdItsJson) {
    mlt::test::HttpReceiver receiver;
    const NotifyEvent e = mlt::test::sample_event();
    const mlt::NotifyOutcome first = mlt::LocalNotifier(options(receiver)).send(e);
    EXPECT_TRUE(first.sent);
    EXPECT_FALSE(first.already_sent);
    EXPECT_TRUE(first.problems.empty()) << first.problems.front();
    ASSERT_EQ(receiver.count(), 2u);
    EXPECT_EQ(receiver.requests()[0].body, mlt::notify_event_json(e));
    EXPECT_EQ(receiver.requests()[1].body, mlt::notify_body(e, NotifyFormat::ntfy));
    EXPECT_EQ(read("events.jsonl"), mlt::notify_event_json(e) + "\n");
    EXPECT_EQ(read("state/notify.sent"), mlt::notify_event_id(e) + "\n");
    EXPECT_NE(read("logs/notify.log").find("target=2 format=ntfy try=1 sent"), std::string::npos);
    EXPECT_EQ(read("logs/notify.log").find("SECRET"), std::string::npos);

    const mlt::NotifyOutcome again = mlt::LocalNotifier(options(receiver)).send(e);
    EXPECT_TRUE(again.already_sent);
    EXPECT_EQ(receiver.count(), 2u);
    EXPECT_EQ(read("events.jsonl"), mlt::notify_event_json(e) + "\n");

    NotifyEvent next = e;
    next.event = NotifyEventKind::restarted;
    EXPECT_TRUE(mlt::LocalNotifier(options(receiver)).send(next).sent);
    EXPECT_EQ(receiver.count(), 4u);
    EXPECT_EQ(read("state/notify.sent"),
              mlt::notify_event_id(e) + "\n" + mlt::notify_event_id(next) + "\n");
}

TEST_F(LocalNotifierTest, AFailureIsReportedNotThrownAndTheTempFilesGo) {
    mlt::test::HttpReceiver receiver(1000);
    mlt::LocalNotifier::Options o = options(receiver);
    o.targets.resize(1);
    o.notify_cmd = "cat > /dev/null; exit 3";
    const std::string tmp = dir_ + "/tmp";
    std::filesystem::create_directories(tmp);
    const char* old = std::getenv("TMPDIR");
    const std::string saved = old ? old : "";
    ::setenv("TMPDIR", tmp.c_str(), 1);
    const mlt::NotifyOutcome outcome = mlt::LocalNotifier(o).send(mlt::test::sample_event());
    if (old)
        ::setenv("TMPDIR", saved.c_str(), 1);
    else
        ::unsetenv("TMPDIR");
    EXPECT_FALSE(outcome.sent);
    ASSERT_EQ(outcome.problems.size(), 2u);
    EXPECT_EQ(outcome.problems[0],
              "the notification 20240501-120000-ab12.2.finished to target 1 (json) was not "
              "sent: HTTP 500 (after 2 tries)");
    EXPECT_EQ(outcome.problems[1], "notify_cmd failed: exit status 3");
    EXPECT_EQ(receiver.count(), 2u);
    EXPECT_TRUE(std::filesystem::is_empty(tmp));
    // Tried once, with its retries: not again.
    EXPECT_TRUE(mlt::LocalNotifier(o).send(mlt::test::sample_event()).already_sent);
}

}  // namespace
