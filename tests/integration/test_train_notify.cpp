// Notifications (docs/usage.md, "Notifications"): a webhook receiver on loopback gets each
// event of a run exactly once, with its fields, whether the mlt that started it stays attached,
// leaves (--no-wait) or is killed, and whether the host's guard sends (it has curl) or the host
// cannot (no curl, wget nor python3 on its PATH: the attached mlt sends). The URL, a secret,
// never shows in a process's argv on the host nor in a file other than the 0600 targets file.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../unit/http_receiver.h"
#include "harness/expect.h"
#include "harness/fault_relay.h"
#include "harness/files.h"
#include "harness/process.h"
#include "harness/train_fixture.h"

namespace fs = std::filesystem;

namespace mlt_test {
namespace {

// The secret part of the test's webhook URL: it must show nowhere but in the targets file.
constexpr char kToken[] = "T0KEN-7f3a9c";

// Trains until `go` appears in the remote dir (bounded), then prints its last line and ends
// with the status in `exit_with` (a file of the remote dir; 0 without it).
const char* const kWaitingModel =
    "echo 'epoch 1'\n"
    "i=0; while [ ! -e \"$MLT_REMOTE_DIR/go\" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); "
    "done\n"
    "echo 'epoch 2 done'\n"
    "exit $(cat \"$MLT_REMOTE_DIR/exit_with\" 2>/dev/null || echo 0)\n";

// A field of an event: its text ("" when it is no string), or its number (-1 when none).
std::string text(const nlohmann::json& e, const char* key) {
    const auto it = e.find(key);
    return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
}
long long number(const nlohmann::json& e, const char* key) {
    const auto it = e.find(key);
    return it != e.end() && it->is_number_integer() ? it->get<long long>() : -1;
}

class TrainNotifyTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        write_user_settings();
        write_shell_model("n", kWaitingModel);
        set_model_settings("");
    }
    void set_model_settings(const std::string& extra) {
        write_model_settings("n", "ssh:\n  train_cmd: \"sh {spec}\"\n  notify:\n    - {url: \"" +
                                      receiver_.url(std::string("/hook/") + kToken) +
                                      "\"}\n  notify_cmd: \"cat >> '" + project() +
                                      "/events.jsonl'; echo >> '" + project() +
                                      "/events.jsonl'\"\n" + extra);
    }
    // The events the receiver got, as JSON objects, in the order they came.
    std::vector<nlohmann::json> received() const {
        std::vector<nlohmann::json> out;
        for (const auto& r : receiver_.requests())
            out.push_back(nlohmann::json::parse(r.body, nullptr, false));
        return out;
    }
    std::vector<std::string> received_events() const {
        std::vector<std::string> out;
        for (const auto& e : received())
            out.push_back(e.is_object() ? text(e, "event") : std::string("not json"));
        return out;
    }
    bool wait_received(size_t count) const {
        return wait_until([&] { return receiver_.count() >= count; }, std::chrono::seconds(60));
    }
    // Every file under `dir` (but the 0600 targets file) that holds the URL's token.
    static std::vector<std::string> files_with_token(const std::string& dir) {
        std::vector<std::string> out;
        std::error_code ec;
        for (auto it = fs::recursive_directory_iterator(dir, ec);
             it != fs::recursive_directory_iterator(); it.increment(ec)) {
            if (ec || !it->is_regular_file(ec) || it->path().filename() == "notify.targets")
                continue;
            if (read_or_empty(it->path().string()).find(kToken) != std::string::npos)
                out.push_back(it->path().string());
        }
        return out;
    }
    // Processes whose argv holds the token.
    static std::vector<std::string> processes_with_token() {
        std::vector<std::string> out;
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator("/proc", ec)) {
            std::ifstream in(entry.path() / "cmdline");
            std::string cmdline, arg;
            while (std::getline(in, arg, '\0')) cmdline += arg + ' ';
            if (cmdline.find(kToken) != std::string::npos) out.push_back(entry.path().string());
        }
        return out;
    }

    mlt::test::HttpReceiver receiver_;
};

// Attached throughout, the host's guard sends (the host has curl): started, then finished, each
// once, with the run's fields and the last lines; notify_cmd here gets both too. While the job
// runs no process on the machine carries the URL in its argv; after the run no file does,
// but the targets file, which only its user can read.
TEST_F(TrainNotifyTest, TheHostsGuardSendsEachEventOnceWithItsFields) {
    auto run = start_mlt({"ssh", "train", "n"});
    ASSERT_TRUE(wait_received(1)) << run->err() << job_state("n");
    EXPECT_TRUE(processes_with_token().empty()) << processes_with_token().front();
    struct stat st {};
    ASSERT_EQ(::stat(job_file("n", "notify.targets").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    write_file(remote() + "/go", "");
    const ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(wait_received(2)) << job_state("n");
    EXPECT_EQ(received_events(), (std::vector<std::string>{"started", "finished"}))
        << read_or_empty(job_file("n", "notify.log"));
    const nlohmann::json end = received().back();
    EXPECT_EQ(text(end, "model"), "n");
    EXPECT_EQ(number(end, "attempt"), 1);
    EXPECT_EQ(number(end, "exit_status"), 0);
    EXPECT_FALSE(text(end, "run_id").empty());
    EXPECT_EQ(text(end, "id"), text(end, "run_id") + ".1.finished");
    EXPECT_EQ(text(end, "host"), host()) << end.dump();
    EXPECT_NE(end.at("last_lines").dump().find("\"epoch 2 done\""), std::string::npos)
        << end.dump();
    EXPECT_TRUE(end.contains("duration_s") && end.contains("cost")) << end.dump();
    // notify_cmd ran here for each event, with the same JSON.
    const std::string local = read_or_empty(project() + "/events.jsonl");
    EXPECT_NE(local.find("\"event\":\"started\""), std::string::npos) << local;
    EXPECT_NE(local.find("\"event\":\"finished\""), std::string::npos) << local;
    EXPECT_TRUE(files_with_token(remote()).empty()) << files_with_token(remote()).front();
    // This machine's mltk dir: settings aside, the logs, the history, mlt's own log.
    const std::string mltk = fs::path(history_path()).parent_path().parent_path().string();
    for (const auto& file : files_with_token(mltk))
        EXPECT_NE(file.find(".ssh.yaml"), std::string::npos) << file << " holds the URL";
    EXPECT_EQ(receiver_.count(), 2u);
    // `status` counts what the guard sent.
    const ProcessResult shown = mlt({"ssh", "status", "n"});
    EXPECT_TRUE(has_text(shown.out, "notifications: 2 sent")) << describe(shown);
}

// The link cut (through the fault relay) while the job runs: mlt reconnects, and each event
// still comes once.
TEST_F(TrainNotifyTest, ACutLinkSendsNothingTwice) {
    set_model_settings("  reconnect_timeout: 60\n");
    FaultRelay relay(sshd().port());
    append_file(default_known_hosts(), "[127.0.0.1]:" + std::to_string(relay.port()) + " " +
                                           sshd().host_key_type_and_blob() + "\n");
    const std::string via = sshd().user() + "@127.0.0.1:" + std::to_string(relay.port());
    auto run = start_mlt({"ssh", "-h", via, "train", "n"});
    ASSERT_TRUE(wait_received(1)) << run->err() << job_state("n");
    ASSERT_TRUE(run->wait_for_output("epoch 1", kTrainTimeout)) << run->err();
    relay.cut();
    write_file(remote() + "/go", "");
    const ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_GE(relay.cuts(), 1u);
    ASSERT_TRUE(wait_received(2)) << job_state("n");
    EXPECT_EQ(received_events(), (std::vector<std::string>{"started", "finished"}));
}

// With no mlt attached (--no-wait), the guard tells the job's end by a rule (stopped, the rule's
// line in the reason); the --resume that collects it later sends nothing again.
TEST_F(TrainNotifyTest, ANoWaitRunsStopIsToldByTheHostAndAResumeAddsNothing) {
    set_model_settings("  watch: {stop_when: ['epoch 1']}\n");
    const ProcessResult started = mlt({"ssh", "train", "n", "--no-wait"});
    ASSERT_EQ(started.exit_code, 0) << describe(started);
    ASSERT_TRUE(wait_received(2)) << job_state("n");
    EXPECT_EQ(received_events(), (std::vector<std::string>{"started", "stopped"}));
    EXPECT_NE(text(received().back(), "reason").find("fired on the line 'epoch 1'"),
              std::string::npos)
        << received().back().dump();
    const ProcessResult r = mlt({"ssh", "train", "n", "--resume"});
    EXPECT_EQ(r.exit_code, 6) << describe(r);
    EXPECT_EQ(receiver_.count(), 2u) << "an event sent twice";
}

// unattended_shutdown_minutes with no mlt attached: the guard runs shutdown_cmds and says so,
// after the job's end.
TEST_F(TrainNotifyTest, TheUnattendedShutdownIsToldAfterTheEnd) {
    set_model_settings(
        "  shutdown_cmds: [\"echo ran >> shutdown_runs\"]\n  unattended_shutdown_minutes: 0.02\n");
    write_file(remote() + "/go", "");
    const ProcessResult started = mlt({"ssh", "train", "n", "--no-wait"});
    ASSERT_EQ(started.exit_code, 0) << describe(started);
    ASSERT_TRUE(wait_received(3)) << job_state("n");
    EXPECT_EQ(received_events(),
              (std::vector<std::string>{"started", "finished", "unattended_shutdown"}));
    // The event goes out as the guard launches shutdown_cmds, which may write a moment later.
    EXPECT_TRUE(wait_until([&] { return !read_or_empty(remote() + "/shutdown_runs").empty(); },
                           kEffectTimeout));
    EXPECT_EQ(read_or_empty(remote() + "/shutdown_runs"), "ran\n");
    const ProcessResult r = mlt({"ssh", "train", "n", "--resume"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(receiver_.count(), 3u) << "an event sent twice";
}

// A lost job restarted by the run itself (max_restarts): the mlt tells `restarted`, and the
// guard of attempt 2 tells its start and end, each once; notify_from: laptop keeps the URL off
// the host, so the mlt sends the host's events too.
TEST_F(TrainNotifyTest, ARestartIsToldByTheMltAndEachAttemptsEventsOnce) {
    write_shell_model("n",
                      "if [ -z \"$MLT_ATTEMPT\" ]; then echo waiting; i=0; while [ $i -lt 1200 ]; "
                      "do sleep 0.1; i=$((i+1)); done; fi\n"
                      "echo \"attempt ${MLT_ATTEMPT:-1} done\"\n");
    set_model_settings("  notify_from: laptop\n");
    auto run = start_mlt({"ssh", "train", "n", "--max-restarts", "1"});
    ASSERT_TRUE(
        wait_until([&] { return has_text(read_or_empty(job_file("n", "console.log")), "waiting"); },
                   std::chrono::seconds(60)))
        << job_state("n");
    const long pgid = job_pgid("n");
    ASSERT_GT(pgid, 0);
    ASSERT_EQ(::kill(static_cast<pid_t>(-pgid), SIGKILL), 0);
    const ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    std::vector<std::string> ids;
    for (const auto& e : received()) ids.push_back(text(e, "id").substr(text(e, "run_id").size()));
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(
        ids, (std::vector<std::string>{".1.started", ".2.finished", ".2.restarted", ".2.started"}));
    EXPECT_FALSE(path_exists(job_file("n", "notify.targets"))) << job_state("n");
    EXPECT_TRUE(files_with_token(remote()).empty()) << files_with_token(remote()).front();
}

// The mlt that followed the job is killed (kill -9): the guard tells the job's failure alone,
// and the --resume that collects it sends nothing more.
TEST_F(TrainNotifyTest, AKilledClientsRunIsToldOnceAcrossTheResume) {
    auto run = start_mlt({"ssh", "train", "n"});
    ASSERT_TRUE(wait_received(1)) << run->err() << job_state("n");
    run->signal(SIGKILL);
    run->wait(kTrainTimeout);
    write_file(remote() + "/exit_with", "7");
    write_file(remote() + "/go", "");
    ASSERT_TRUE(wait_received(2)) << job_state("n");
    const ProcessResult r = mlt({"ssh", "train", "n", "--resume"});
    EXPECT_EQ(r.exit_code, 7) << describe(r);
    EXPECT_EQ(received_events(), (std::vector<std::string>{"started", "failed"}));
    EXPECT_EQ(number(received().back(), "exit_status"), 7);
}

// A host without curl, wget and python3 on its PATH (a directory of chosen links to the rest of
// /usr/bin, through the remote home's .bashrc): it says why it cannot send, and the attached
// mlt sends every event in its place, once.
TEST_F(TrainNotifyTest, AHostThatCannotSendLeavesTheEventsToTheAttachedMlt) {
    const std::string bin = sshd().dir() + "/hostbin";
    fs::create_directories(bin);
    for (const auto& entry : fs::directory_iterator("/usr/bin")) {
        const std::string name = entry.path().filename().string();
        if (name == "curl" || name == "wget" || name.rfind("python", 0) == 0) continue;
        fs::create_symlink(entry.path(), bin + "/" + name);
    }
    write_file(sshd().remote_home() + "/.bashrc", "export PATH=\"" + bin + "\"\n");
    write_file(remote() + "/go", "");
    const ProcessResult r = mlt({"ssh", "train", "n"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, "cannot send notifications from " + host() + ": no curl"))
        << describe(r);
    ASSERT_TRUE(wait_received(2));
    EXPECT_EQ(received_events(), (std::vector<std::string>{"started", "finished"}));
    EXPECT_FALSE(path_exists(job_file("n", "notify.targets"))) << job_state("n");
    EXPECT_TRUE(files_with_token(remote()).empty()) << files_with_token(remote()).front();
}

}  // namespace
}  // namespace mlt_test
