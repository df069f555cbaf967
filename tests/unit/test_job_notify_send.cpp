// notify_send.sh (src/job/sh/notify_send.sh) under dash and BusyBox's sh, on "hosts" whose only
// tools are chosen programs: with curl, GNU wget or python3 each target gets the event once with
// its body and headers, a 500 or a silent try is retried, a target that never takes it is logged
// and warned about; with only BusyBox's wget, or no client, nothing is sent and one line says
// why. No URL ever reaches a child's argv or environment, the log or the output.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "http_receiver.h"
#include "mlt/util/text.h"
#include "notify_fixture.h"

namespace {

using mlt::NotifyFormat;
using mlt::test::Client;
using mlt::test::HttpReceiver;
using mlt::test::NotifyFixture;

constexpr char kSecret[] = "SECRET-TOKEN";

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// The lines of `text`.
std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out = mlt::split(text, '\n');
    if (!out.empty() && out.back().empty()) out.pop_back();
    return out;
}

// Three targets, one per format, each with a secret in its path.
std::vector<mlt::NotifyTarget> three_targets(const HttpReceiver& receiver) {
    return {{receiver.url(std::string("/t1/") + kSecret + "-1"), NotifyFormat::json},
            {receiver.url(std::string("/t2/") + kSecret + "-2"), NotifyFormat::ntfy},
            {receiver.url(std::string("/t3/") + kSecret + "-3"), NotifyFormat::slack}};
}

// No secret in anything the script or its children left readable: argv and environment of
// every child (argv.log), the log, the output.
void expect_no_secret(const NotifyFixture& f, const std::string& output) {
    EXPECT_FALSE(has(f.read("argv.log"), kSecret)) << f.read("argv.log");
    EXPECT_FALSE(has(f.read("log"), kSecret)) << f.read("log");
    EXPECT_FALSE(has(output, kSecret)) << output;
}

using Param = std::tuple<std::string, Client>;

class NotifySend : public ::testing::TestWithParam<Param> {
  protected:
    NotifyFixture fixture_{std::get<0>(GetParam()), std::get<1>(GetParam())};
    std::string client() const { return mlt::test::client_name(std::get<1>(GetParam())); }
};

TEST_P(NotifySend, EachTargetGetsTheEventOnceWithItsBodyAfterARetry) {
    HttpReceiver receiver(1);  // the first request gets a 500
    const mlt::NotifyEvent e = mlt::test::sample_event();
    fixture_.write_event(e);
    fixture_.write_targets(three_targets(receiver));
    EXPECT_EQ(fixture_.run({"client"}).output, client() + "\n");
    const NotifyFixture::Result check = fixture_.run({"check"});
    EXPECT_EQ(check.status, 0);
    EXPECT_EQ(check.output, "");

    const NotifyFixture::Result r = fixture_.send();
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output, "");
    const auto requests = receiver.requests();
    ASSERT_EQ(requests.size(), 4u);
    EXPECT_EQ(requests[0].answered, 500);
    const std::string id = mlt::notify_event_id(e);
    const struct {
        const char* path;
        NotifyFormat format;
        const char* type;
    } expected[] = {{"/t1/", NotifyFormat::json, "application/json"},
                    {"/t2/", NotifyFormat::ntfy, "text/plain; charset=utf-8"},
                    {"/t3/", NotifyFormat::slack, "application/json"}};
    for (const auto& x : expected) {
        int taken = 0;
        for (const auto& q : requests) {
            if (q.path.rfind(x.path, 0) != 0) continue;
            EXPECT_EQ(q.method, "POST");
            EXPECT_EQ(q.body, mlt::notify_body(e, x.format)) << x.path;
            EXPECT_EQ(q.headers.at("content-type"), x.type) << x.path;
            EXPECT_EQ(q.headers.count("title") ? q.headers.at("title") : "",
                      x.format == NotifyFormat::ntfy ? mlt::notify_title(e) : "");
            taken += q.answered == 200;
        }
        EXPECT_EQ(taken, 1) << x.path;
    }
    const std::vector<std::string> log = lines_of(fixture_.read("log"));
    ASSERT_EQ(log.size(), 4u) << fixture_.read("log");
    const std::string stamp = R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ )";
    const std::string at = std::regex_replace(id, std::regex(R"(\.)"), R"(\.)");
    for (const auto& [line, rest] : std::vector<std::pair<std::string, std::string>>{
             {log[0], " target=1 format=json try=1 failed: HTTP 500"},
             {log[1], " target=1 format=json try=2 sent"},
             {log[2], " target=2 format=ntfy try=1 sent"},
             {log[3], " target=3 format=slack try=1 sent"}})
        EXPECT_TRUE(std::regex_match(line, std::regex(stamp + at + rest))) << line;
    EXPECT_EQ(fixture_.read("sent"), id + "\n");
    EXPECT_TRUE(has(fixture_.read("argv.log"), client() == "python3" ? "python3\n-\n" : client()))
        << "the client did not run";
    expect_no_secret(fixture_, r.output);

    // The same event again: its id is in the sent file, nothing goes out.
    EXPECT_EQ(fixture_.send().status, mlt::notify_status::kAlreadySent);
    EXPECT_EQ(receiver.count(), 4u);
}

TEST_P(NotifySend, ATargetThatNeverTakesItIsLoggedWarnedAndNotTriedAgain) {
    HttpReceiver receiver(1000);
    const mlt::NotifyEvent e = mlt::test::sample_event();
    fixture_.write_event(e);
    fixture_.write_targets({{receiver.url(std::string("/hook/") + kSecret), NotifyFormat::slack}});
    const NotifyFixture::Result r = fixture_.send({3, 0, 10});
    EXPECT_EQ(r.status, mlt::notify_status::kFailed);
    const std::string id = mlt::notify_event_id(e);
    EXPECT_EQ(r.output, "mlt: warning: the notification " + id +
                            " to target 1 (slack) was not sent: HTTP 500 (after 3 tries)\n");
    EXPECT_EQ(receiver.count(), 3u);
    const std::vector<std::string> log = lines_of(fixture_.read("log"));
    ASSERT_EQ(log.size(), 3u);
    EXPECT_TRUE(has(log[2], id + " target=1 format=slack try=3 failed: HTTP 500")) << log[2];
    // Tried once, with its retries: a later send of the same id does nothing.
    EXPECT_EQ(fixture_.read("sent"), id + "\n");
    expect_no_secret(fixture_, r.output);
}

TEST_P(NotifySend, ATryThatGetsNoAnswerEndsAtItsTimeoutAndTheNextOneSends) {
    HttpReceiver receiver(0, 1);  // the first request gets no answer at all
    fixture_.write_event(mlt::test::sample_event());
    fixture_.write_targets({{receiver.url(std::string("/hook/") + kSecret), NotifyFormat::json}});
    const NotifyFixture::Result r = fixture_.send({2, 0, 1});
    EXPECT_EQ(r.status, 0) << r.output << fixture_.read("log");
    const std::vector<std::string> log = lines_of(fixture_.read("log"));
    ASSERT_EQ(log.size(), 2u) << fixture_.read("log");
    EXPECT_TRUE(has(log[0], "try=1 failed: timed out after 1 s")) << log[0];
    EXPECT_TRUE(has(log[1], "try=2 sent")) << log[1];
    EXPECT_EQ(receiver.count(), 2u);
    expect_no_secret(fixture_, r.output);
}

// A redirect is not followed by any client (a POST would become a GET elsewhere): a failed try.
TEST_P(NotifySend, ARedirectIsAFailedTry) {
    HttpReceiver receiver(1, 0, 302);
    fixture_.write_event(mlt::test::sample_event());
    fixture_.write_targets({{receiver.url(std::string("/hook/") + kSecret), NotifyFormat::json}});
    const NotifyFixture::Result r = fixture_.send();
    EXPECT_EQ(r.status, 0) << r.output;
    const std::vector<std::string> log = lines_of(fixture_.read("log"));
    ASSERT_EQ(log.size(), 2u) << fixture_.read("log");
    EXPECT_TRUE(has(log[0], "try=1 failed: HTTP 302")) << log[0];
    ASSERT_EQ(receiver.count(), 2u);
    for (const auto& q : receiver.requests())
        EXPECT_EQ(q.method + " " + q.path.substr(0, 6), "POST /hook/");
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
    return std::get<0>(info.param) + "_" + mlt::test::client_name(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Clients, NotifySend,
                         ::testing::Combine(::testing::Values("dash", "busybox"),
                                            ::testing::Values(Client::curl, Client::gnu_wget,
                                                              Client::python3)),
                         param_name);

class NotifyNoClient : public ::testing::TestWithParam<std::string> {};

// BusyBox's wget takes the URL only in argv, where the process list shows it: such a host does
// not send, and says why; so does a host without any client. The id stays unsent, for an
// attached mlt to send.
TEST_P(NotifyNoClient, NothingIsSentAndOneLineSaysWhy) {
    for (const auto& [client, why] : std::vector<std::pair<Client, std::string>>{
             {Client::busybox_wget,
              "no curl nor python3, and its wget is BusyBox's, which takes a URL only in its "
              "arguments (seen in the process list)"},
             {Client::none, "no curl, GNU wget nor python3 on PATH"}}) {
        HttpReceiver receiver;
        NotifyFixture f(GetParam(), client);
        const mlt::NotifyEvent e = mlt::test::sample_event();
        f.write_event(e);
        f.write_targets({{receiver.url(std::string("/hook/") + kSecret), NotifyFormat::json}});
        const NotifyFixture::Result c = f.run({"client"});
        EXPECT_EQ(c.status, mlt::notify_status::kNoClient);
        EXPECT_EQ(c.output, "none: " + why + "\n");
        const NotifyFixture::Result check = f.run({"check"});
        EXPECT_EQ(check.status, mlt::notify_status::kNoClient);
        EXPECT_EQ(check.output,
                  "mlt: warning: cannot send notifications from this host: " + why + "\n");
        const NotifyFixture::Result r = f.send();
        EXPECT_EQ(r.status, mlt::notify_status::kNoClient);
        EXPECT_EQ(r.output,
                  "mlt: warning: cannot send notifications from this host: " + why + "\n");
        EXPECT_TRUE(std::regex_match(
            f.read("log"),
            std::regex(".*Z " + mlt::notify_event_id(e) + " not sent: " +
                       std::regex_replace(why, std::regex(R"([().])"), R"(\$&)") + "\n")))
            << f.read("log");
        EXPECT_EQ(f.read("sent"), "");
        EXPECT_EQ(receiver.count(), 0u);
        expect_no_secret(f, r.output);
    }
}

std::string shell_name(const ::testing::TestParamInfo<std::string>& p) {
    return p.param;
}

INSTANTIATE_TEST_SUITE_P(Shells, NotifyNoClient, ::testing::Values("dash", "busybox"), shell_name);

}  // namespace
