// Every remote command of the job layer, rendered for fixed inputs (a remote dir with a space
// and a quote in it), passes shellcheck as POSIX sh with no exclusion, as do the scripts a
// run leaves on the remote and their batches. The commands are what the public functions
// send: a recording Remote keeps each one.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "job/job_shell.h"
#include "mlt/job/job.h"
#include "mlt/job/status.h"
#include "mlt/transfer/transfer.h"
#include "mlt/util/paths.h"
#include "mlt/util/shell.h"
#include "sh_check.h"

namespace {

constexpr const char* kDir = "~/work dir/it's";
constexpr const char* kModel = "my_model-1.2";
constexpr const char* kRun = "673f1c2a-9b3e01";

// Calls `f`, letting an mlt::Error pass (the command was sent before it was thrown).
template <typename F>
void sent(F f) {
    try {
        f();
    } catch (const mlt::Error&) {
    }
}

// Keeps every command it is given, and answers each with status 0 and "acquired": what a
// function makes of that answer is not the point (an error it throws is let pass).
class RecordingRemote : public mlt::Remote {
  public:
    const std::string& name() const override { return name_; }
    mlt::RemoteOutput run(const std::string& command, std::string_view) override {
        commands.push_back(command);
        return {0, "acquired\n", ""};
    }
    int stream(const std::string& command, const mlt::InputSource&, const mlt::OutputSink&,
               const mlt::OutputSink&) override {
        commands.push_back(command);
        return 0;
    }
    void run_ahead(const std::string& command, std::string) override {
        commands.push_back(command);
    }
    void run_ahead_on_guess(const std::string& command, std::string) override {
        commands.push_back(command);
    }
    std::vector<std::string> commands;

  private:
    std::string name_ = "recorder";
};

// The lock's commands, with every field of a new run set.
void lock_commands(mlt::Remote& r) {
    mlt::NewRun run{kRun, "me@laptop pid 7", "#!/bin/sh\n", "python train.py 'a b'",
                    std::string(kModel) + ".mltk.zip"};
    run.clean = true;
    run.attempt = 2;
    run.start_ticket = "5f3a";
    run.came_from = "gpu-1";
    bool claimed = false;
    sent([&] { mlt::JobDir(r, kDir, kModel).acquire_run(run, &claimed); });
    sent([&] { mlt::JobDir(r, kDir, kModel).set_run_phase(kRun, mlt::RunPhase::running); });
    sent([&] { mlt::JobDir(r, kDir, kModel).release_run(kRun); });
    sent([&] { mlt::JobDir(r, kDir, kModel).mark_run_moved(kRun, "gpu-2 as attempt 3"); });
    sent([&] { mlt::JobDir(r, kDir, kModel).begin_gang_attempt(kRun, 2, "true\n"); });
    sent([&] { mlt::JobDir(r, kDir, kModel).retake_run(kRun); });
}

// The start's, the stop's, TensorBoard's, the result's and shutdown's commands.
void start_and_stop_commands(mlt::Remote& r) {
    sent([&] { mlt::JobDir(r, kDir, kModel).start_job(kRun); });
    sent([&] { mlt::JobDir(r, kDir, kModel).void_start_tickets(kRun); });
    sent([&] { mlt::JobDir(r, kDir, kModel).restart_job(kRun, 2); });
    const std::string run = kRun;
    sent([&] { mlt::JobDir(r, kDir, kModel).stop_job(10, &run); });
    sent([&] { mlt::JobDir(r, kDir, kModel).stop_job(10); });
    sent([&] { mlt::JobDir(r, kDir, kModel).stop_and_release(10); });
    sent([&] { mlt::JobDir(r, kDir, kModel).discard_job(); });
    sent([&] { mlt::JobDir(r, kDir, kModel).start_tensorboard(6006); });
    sent([&] { mlt::JobDir(r, kDir, kModel).stop_tensorboard(); });
    sent([&] { mlt::JobDir(r, kDir, kModel).read_job_result(); });
    sent([&] { mlt::JobDir(r, kDir, kModel).start_shutdown(kRun, "#!/bin/sh\n", true); });
    sent([&] { mlt::JobDir(r, kDir, kModel).read_shutdown_status(); });
    sent([&] { mlt::JobDir(r, kDir, kModel).query_jobs(); });
    sent([&] { mlt::query_jobs(r, kDir); });
}

// The follow's commands: of a run's job with samples, of shutdown_cmds, of a job outside a
// run; and the reads of a log.
void follow_commands(mlt::Remote& r) {
    const std::string run = kRun;
    const auto sink = [](std::string_view) {};
    mlt::JobDir(r, kDir, kModel).follow_log(mlt::Task::job, &run, 0, 15, sink, 5);
    mlt::JobDir(r, kDir, kModel).follow_log_ahead(mlt::Task::job, &run, 10, 15);
    mlt::JobDir(r, kDir, kModel).follow_log(mlt::Task::shutdown, &run, 3, 15, sink);
    mlt::JobDir(r, kDir, kModel).follow_log(mlt::Task::job, nullptr, 0, 15, sink);
    mlt::JobDir(r, kDir, kModel).read_log(mlt::Task::job, 12, sink);
    mlt::JobDir(r, kDir, kModel).read_log_ahead_on_guess(mlt::Task::shutdown, 0);
}

// The commands that carry code of another layer as a value, run by eval: the starts sent
// ahead (the upload's test `current_test`) and the follow with the release (the listing's
// digest).
void commands_with_code(mlt::Remote& r, const std::string& current_test) {
    sent([&] {
        mlt::JobDir(r, kDir, kModel).start_job_ahead_if_current(kRun, "5f3a", current_test);
    });
    sent([&] { mlt::JobDir(r, kDir, kModel).start_job_if_current(kRun, "5f3a", current_test); });
    const std::string run = kRun;
    const mlt::ReleaseAtEnd release{"/home/me/logs/it's here", std::string(64, 'a')};
    mlt::JobDir(r, kDir, kModel)
        .follow_log(
            mlt::Task::job, &run, 0, 15, [](std::string_view) {}, 5, nullptr, &release);
    mlt::JobDir(r, kDir, kModel).follow_log_ahead(mlt::Task::job, &run, 10, 15, 0, &release);
}

// A job's wrapper spec with every option on.
mlt::WrapperSpec full_wrapper() {
    mlt::WrapperSpec w;
    w.model = kModel;
    w.run_id = kRun;
    w.spec_file = "models/my_model.py";
    w.archive = std::string(kModel) + ".mltk.zip";
    w.mltk_train = true;
    w.clean = true;
    w.verbose = true;
    w.environment = {{"DATA", "$HOME/data"}, {"QUOTED", "it's \"here\""}};
    w.fixed_environment = {{"MASTER_ADDR", "10.0.0.1"}, {"NODE_RANK", "1"}};
    w.node_ifname = true;
    w.gang_barrier = true;
    w.create_venv = true;
    w.venv_packages = {"wheel", "silabs-mltk==0.20.0"};
    w.venv_fallback_packages = {"wheel", "silabs-mltk"};
    w.startup_cmds = {"echo 'setting up'", "cd sub"};
    w.train_cmd = "mltk train my_model";
    w.train_args = {"--epochs", "3 4"};
    w.download_regexes = {"\\./out/.*\\.txt"};
    w.download_pairs = {"~/results", "$SCRATCH/x y"};
    return w;
}

// Where a value is code, run by eval or `sh -c` (the upload's test, the listing's digest, a
// batch, the sweeper), its `$`, quotes and `~` are literal on purpose inside the value's
// single quotes, and shellcheck takes them for mistakes: SC2016 (an expression in single
// quotes), SC1003 (an escaped quote in them), SC2088 (a quoted tilde). The commands and
// scripts that carry such values are checked without those three; each such value is checked
// as code on its own (here, and the scripts in test_remote_scripts.cpp).
constexpr const char* kCodeInValues = "SC2016,SC1003,SC2088";

// What shellcheck says of `texts` (but `exclude`), with the texts it found fault with.
void expect_clean(const std::vector<std::pair<std::string, std::string>>& texts,
                  const std::string& exclude = "") {
    const std::string found = mlt::sh_check::shellcheck_all(texts, exclude);
    std::string shown;
    for (const auto& [name, text] : texts)
        if (found.find(name + ":") != std::string::npos) shown += name + ":\n" + text + "\n";
    EXPECT_EQ(found, "") << shown;
}

// The commands, named by their place.
std::vector<std::pair<std::string, std::string>> named(const std::vector<std::string>& commands) {
    std::vector<std::pair<std::string, std::string>> out;
    for (size_t i = 0; i < commands.size(); ++i)
        out.emplace_back("command-" + std::to_string(i), commands[i]);
    return out;
}

TEST(JobCommands, EveryCommandPassesShellcheck) {
    RecordingRemote r;
    lock_commands(r);
    start_and_stop_commands(r);
    follow_commands(r);
    ASSERT_EQ(r.commands.size(), 26u);
    expect_clean(named(r.commands));
}

TEST(JobCommands, TheCommandsThatCarryCodePassShellcheck) {
    const std::string dir = ::testing::TempDir() + "mlt-job-commands";
    std::filesystem::create_directories(dir);
    mlt::write_file_atomic(dir + "/a b.txt", "x", 0644);
    const auto test = mlt::uploads_current_test({{kDir, {{dir + "/a b.txt", "sub/a b.txt"}}}});
    std::filesystem::remove_all(dir);
    ASSERT_TRUE(test.has_value());
    const std::string digest = mlt::remote_tree_digest("/home/me/logs/it's here");
    RecordingRemote r;
    commands_with_code(r, *test);
    ASSERT_EQ(r.commands.size(), 4u);
    auto texts = named(r.commands);
    texts.emplace_back("the-upload-test", *test);
    texts.emplace_back("the-listing-digest", digest);
    expect_clean(texts, kCodeInValues);
    // The code is there, as a value.
    EXPECT_EQ(r.commands[0].rfind("mlt_current_test=" + mlt::shell_quote(*test) + "\n", 0), 0u);
    EXPECT_NE(r.commands[2].find("\nmlt_release_digest=" + mlt::shell_quote(digest) + "\n"),
              std::string::npos);
}

TEST(JobCommands, TheScriptsARunLeavesAndTheirBatchesPassShellcheck) {
    const mlt::WrapperSpec full = full_wrapper();
    mlt::WrapperSpec plain = full;
    plain.log_dir = "~/logs/{model}";
    plain.mltk_train = plain.clean = plain.verbose = plain.node_ifname = false;
    plain.gang_barrier = plain.create_venv = false;
    plain.environment = plain.fixed_environment = {};
    plain.download_regexes = plain.download_pairs = {};
    const mlt::ShutdownSpec shutdown{
        kModel, kRun, {{"TOKEN", "$(cat ~/.token)"}}, true, {"echo bye", "poweroff"}, "vast", "42"};
    expect_clean({{"the-wrapper", mlt::make_wrapper_script(full)},
                  {"the-plain-wrapper", mlt::make_wrapper_script(plain)},
                  {"the-shutdown-script", mlt::make_shutdown_script(shutdown)}},
                 kCodeInValues);
    expect_clean({{"the-batch", mlt::job_detail::make_user_batch(full)},
                  {"the-plain-batch", mlt::job_detail::make_user_batch(plain)},
                  {"the-shutdown-batch", mlt::job_detail::make_shutdown_batch(shutdown)}});
}

TEST(JobCommands, TheCheckCanFail) {
    // A command that splices a value unquoted is reported, by its name.
    const std::string found =
        mlt::sh_check::shellcheck_all({{"clean", "x='a b'\nprintf '%s\\n' \"$x\"\n"},
                                       {"faulty", "x='a b'\nprintf '%s\\n' $x\n"}});
    EXPECT_EQ(found.rfind("faulty:2:", 0), 0u) << found;
    EXPECT_EQ(found.find("clean:"), std::string::npos) << found;
}

}  // namespace
