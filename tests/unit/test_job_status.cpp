// The state of a remote dir's jobs: the parsing of status.sh's lines, its run against a real
// job under each shell, and the tables shown.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "job_fixture.h"
#include "mlt/job/status.h"
#include "mlt/util/error.h"

namespace {

// A Remote that answers every command with canned output and remembers the command.
class FakeRemote : public mlt::Remote {
  public:
    explicit FakeRemote(mlt::RemoteOutput answer) : answer_(std::move(answer)) {}
    const std::string& name() const override { return name_; }
    mlt::RemoteOutput run(const std::string& command, std::string_view) override {
        last_command = command;
        return answer_;
    }
    int stream(const std::string&, const mlt::InputSource&, const mlt::OutputSink&,
               const mlt::OutputSink&) override {
        throw std::logic_error("not used by query_jobs");
    }
    std::string last_command;

  private:
    std::string name_ = "me@fake:22";
    mlt::RemoteOutput answer_;
};

TEST(JobStatus, ParsesEveryState) {
    // model pgid alive started exit now locked run phase clean attempt moved logged, and the
    // guard's deadline limit silent guard guard_stop
    FakeRemote remote(
        {0,
         "job\tdone\t\t0\t100\t0\t500\t1\tr1\tfinished\t\t\t\t\t\t\t\t\t\t\t\t\t\n"
         "job\tfailed\t77\t0\t100\t3\t500\t1\tr2\trunning\t\t\t\t\t\t\t\t\t\t\t\t\t\n"
         "job\trun\t42\t1\t100\t\t500\t1\tr3\tstarting\t\t\t\t\t\t\t\t\t\t\t\t\t\n"
         "job\tgone\t43\t0\t100\t\t500\t1\tr4\trunning\t\t2\t\t\t\t\t\t\t\t\t\t\t\n"
         "job\tnew\t\t0\t100\t\t500\t1\tr5\tstarting\t\t\t\t\t\t\t\t\t\t\t\t\t\n"
         "job\told\t44\t0\t100\t0\t500\t0\tr6\t\t\t\t\t\t\t\t\t\t\t\t\t\t\n"
         "job\tup\t\t0\t100\t\t500\t1\tr7\tuploading\t1\t\t\t\t\t\t\t\t\t\t\t\t\n"
         "job\tcut\t\t0\t100\t\t500\t0\tr8\t\t\t\t\t\t\t\t\t\t\t\t\t\t\n"
         "job\tdone2\t45\t0\t100\t0\t500\t1\tr9\tcollected\t\t\t\t\t\t\t\t\t\t\t\t\t\n"
         "garbage line\n",
         ""});
    auto jobs = mlt::query_jobs(remote, "~/ws");
    ASSERT_EQ(jobs.size(), 9u);
    EXPECT_EQ(jobs[6].state, mlt::JobState::uploading);
    EXPECT_TRUE(jobs[6].clean);
    EXPECT_EQ(jobs[6].run_id, "r7");
    EXPECT_EQ(jobs[7].state, mlt::JobState::aborted);
    EXPECT_EQ(jobs[8].state, mlt::JobState::collected);
    EXPECT_FALSE(jobs[0].clean);
    EXPECT_EQ(jobs[5].state, mlt::JobState::collected);
    EXPECT_EQ(jobs[0].state, mlt::JobState::finished);
    EXPECT_EQ(jobs[0].exit_status, 0);
    EXPECT_EQ(jobs[1].state, mlt::JobState::finished);
    EXPECT_EQ(jobs[1].exit_status, 3);
    EXPECT_EQ(jobs[2].state, mlt::JobState::running);  // alive wins over the lock's phase
    EXPECT_EQ(jobs[2].pgid, 42);
    EXPECT_EQ(jobs[2].started, 100);
    EXPECT_EQ(jobs[2].remote_now, 500);
    EXPECT_EQ(jobs[3].state, mlt::JobState::lost);
    EXPECT_EQ(jobs[3].attempt, 2);  // a lost job restarted once, then lost again
    EXPECT_EQ(jobs[2].attempt, 1);
    EXPECT_EQ(jobs[4].state, mlt::JobState::starting);
    // The remote dir reaches the shell quoted, with ~ kept as the remote home.
    EXPECT_EQ(remote.last_command.rfind("mlt_rd=\"$HOME\"/ws\n", 0), 0u) << remote.last_command;
}

TEST(JobStatus, AMovedLockAndTheConsoleLogsLastChangeAreRead) {
    // The lock's moved= line is the host's word: shown printable, never as sequences.
    FakeRemote remote({0,
                       "job\tleft\t43\t0\t100\t\t500\t1\tr4\trunning\t\t2\tB\x1b[31m as "
                       "attempt 3\t450\t\t\t\t\t\t\t\t\t\n",
                       ""});
    auto jobs = mlt::query_jobs(remote, "~/ws");
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].logged, 450);
    EXPECT_FALSE(jobs[0].moved_to.empty());
    EXPECT_EQ(jobs[0].moved_to.find('\x1b'), std::string::npos) << jobs[0].moved_to;
    EXPECT_NE(jobs[0].moved_to.find("as attempt 3"), std::string::npos) << jobs[0].moved_to;
    EXPECT_EQ(jobs[0].state, mlt::JobState::lost);
}

TEST(JobStatus, TheGuardsDutiesAndStateAreRead) {
    FakeRemote remote({0,
                       "job\tg\t42\t1\t100\t\t500\t1\tr1\trunning\t\t\t\t450\t"
                       "7700\t--max-hours 2\t60\tgone\t\t300\tmlt-sample 5 load=1 free=2\t2\t4 1\n"
                       "job\th\t43\t1\t100\t\t500\t1\tr2\trunning\t\t\t\t450\t\t\t\trunning"
                       "\t\t\t\t\t\n"
                       "job\ts\t44\t0\t100\t143\t500\t1\tr3\tfinished\t\t\t\t450\t\t\t\t\t"
                       "silent 60\x1b[2J\t\t\t\t\n",
                       ""});
    auto jobs = mlt::query_jobs(remote, "~/ws");
    ASSERT_EQ(jobs.size(), 3u);
    EXPECT_EQ(jobs[0].deadline, 7700);
    EXPECT_EQ(jobs[0].limit, "--max-hours 2");
    EXPECT_EQ(jobs[0].silent_s, 60);
    EXPECT_EQ(jobs[0].guard, mlt::GuardState::gone);
    EXPECT_EQ(jobs[0].idle_s, 300);
    EXPECT_EQ(jobs[0].sample, "mlt-sample 5 load=1 free=2");
    EXPECT_EQ(jobs[0].rules, 2);
    EXPECT_EQ(jobs[1].rules, 0);
    EXPECT_TRUE(jobs[0].notifies);
    EXPECT_EQ(jobs[0].notify_sent, 4);
    EXPECT_EQ(jobs[0].notify_failed, 1);
    EXPECT_FALSE(jobs[1].notifies);
    EXPECT_EQ(jobs[1].guard, mlt::GuardState::running);
    EXPECT_EQ(jobs[2].guard, mlt::GuardState::none);
    EXPECT_EQ(jobs[2].guard_stop.rfind("silent 60", 0), 0u);
    EXPECT_EQ(jobs[2].guard_stop.find('\x1b'), std::string::npos) << "the host's word, printable";
}

TEST(JobStatus, AStatusThatIsNotANumberIsNoStatus) {
    // A half-written or foreign exit_status file once read as 0 (success) or wrapped: it must
    // leave the job without a status, and a garbled pid or time reads as unknown.
    FakeRemote remote(
        {0,
         "job\tjunk\t42x\t0\t1e3\tok\t500\t1\tr1\trunning\t\t\t\t\t\t\t\t\t\t\t\t\t\n"
         "job\thuge\t\t0\t100\t99999999999999999999\t500\t1\tr2\trunning\t\t\t\t\t\t\t\t\t\t\t\t\t"
         "\n"
         "job\tsigned\t-5\t0\t100\t-1\t500\t1\tr3\trunning\t\t\t\t\t\t\t\t\t\t\t\t\t\n",
         ""});
    auto jobs = mlt::query_jobs(remote, "~/ws");
    ASSERT_EQ(jobs.size(), 3u);
    for (const auto& job : jobs) {
        EXPECT_FALSE(job.exit_status.has_value()) << job.model;
        EXPECT_EQ(job.pgid, 0) << job.model;
        EXPECT_NE(job.state, mlt::JobState::finished) << job.model;
    }
    EXPECT_EQ(jobs[0].started, 0);
    EXPECT_EQ(jobs[0].state, mlt::JobState::starting);
}

TEST(JobStatus, OneModelOnly) {
    FakeRemote remote({0, "", ""});
    EXPECT_TRUE(mlt::JobDir(remote, "/w s", "my_model").query_jobs().empty());
    EXPECT_NE(remote.last_command.find("mlt_rd='/w s'\n"), std::string::npos);
    EXPECT_NE(remote.last_command.find("mlt_model=my_model\n"), std::string::npos);
}

TEST(JobStatus, RemoteFailureIsAnError) {
    FakeRemote remote({127, "", "sh: not found"});
    EXPECT_THROW(mlt::query_jobs(remote, "."), mlt::Error);
}

TEST(JobStatus, ModelNamesAreValidated) {
    for (const char* bad : {"", "../x", "a/b", ".hidden", "-rf", "a b", "x;y", "$(id)"})
        EXPECT_THROW(mlt::validate_model_name(bad), mlt::Error) << bad;
    for (const char* good : {"my_model", "my_model-test", "v1.2", "KWS_on_off"})
        EXPECT_NO_THROW(mlt::validate_model_name(good)) << good;
}

TEST(JobStatus, FormatsNoJobAndTable) {
    EXPECT_EQ(mlt::format_jobs({}, "~/ws", "u@h:22"), "no job in ~/ws on u@h:22\n");
    mlt::JobStatus j;
    j.model = "m";
    j.state = mlt::JobState::running;
    j.pgid = 9;
    j.started = 1000;
    j.remote_now = 1000 + 3725;
    j.run_id = "673f1c2a-9b3e01";
    const std::string table = mlt::format_jobs({j}, ".", "h");
    EXPECT_NE(table.find("running"), std::string::npos);
    EXPECT_NE(table.find("673f1c2a-9b3e01"), std::string::npos) << table;
    EXPECT_NE(table.find("1h02m"), std::string::npos) << table;
    EXPECT_NE(table.find(" ATTEMPT "), std::string::npos) << table;
    EXPECT_NE(table.find("673f1c2a-9b3e01  1 "), std::string::npos) << table;
    j.attempt = 2;
    const std::string second = mlt::format_jobs({j}, ".", "h");
    EXPECT_NE(second.find("673f1c2a-9b3e01  2 "), std::string::npos) << second;
}

TEST(JobStatus, RemoteNamesAndRunIdsAreShownEscaped) {
    mlt::JobStatus j;
    j.model = "m\x1b]0;title\x07";
    j.state = mlt::JobState::running;
    j.run_id = "r\x1b]52;c;aGk=\x07\x1b[2J\xc2\x9b";
    const std::string table = mlt::format_jobs({j}, ".", "h");
    EXPECT_EQ(table.find('\x1b'), std::string::npos) << table;
    EXPECT_EQ(table.find('\x07'), std::string::npos) << table;
    EXPECT_NE(table.find("m\\x1b]0;title\\x07 "), std::string::npos) << table;
    EXPECT_NE(table.find("r\\x1b]52;c;aGk=\\x07\\x1b[2J\\xc2\\x9b "), std::string::npos) << table;
    std::vector<mlt::NodeJobs> nodes(2);
    nodes[0].host = "h0";
    nodes[0].jobs = {j};
    nodes[1].host = "h1";
    nodes[1].problem = "tar said \x1b[?1049h";
    const std::string both = mlt::format_node_jobs(nodes);
    EXPECT_EQ(both.find('\x1b'), std::string::npos) << both;
    EXPECT_NE(both.find("unreachable: tar said \\x1b[?1049h"), std::string::npos) << both;
}

TEST(JobStatus, OneTableForEveryNode) {
    mlt::JobStatus j;
    j.model = "m";
    j.state = mlt::JobState::running;
    j.run_id = "673f1c2a-9b3e01";
    std::vector<mlt::NodeJobs> nodes(3);
    nodes[0].host = "u@gpu0:22";
    nodes[0].jobs = {j};
    nodes[1].host = "u@a-longer-host-name:2222";
    nodes[2].host = "gpu2";
    nodes[2].problem = "connection refused";
    const std::string table = mlt::format_node_jobs(nodes);
    std::vector<std::string> rows;
    for (size_t at = 0, end; (end = table.find('\n', at)) != std::string::npos; at = end + 1)
        rows.push_back(table.substr(at, end - at));
    ASSERT_EQ(rows.size(), 4u) << table;
    // The columns line up: every row's third column starts where MODEL does.
    const size_t model = rows[0].find("MODEL");
    EXPECT_EQ(rows[0].rfind("RANK HOST", 0), 0u) << table;
    EXPECT_EQ(rows[1].rfind("0    u@gpu0:22", 0), 0u) << table;
    EXPECT_EQ(rows[1].substr(model, 2), "m ") << table;
    EXPECT_NE(rows[1].find("running"), std::string::npos) << table;
    EXPECT_EQ(rows[2].substr(model), "none") << table;
    EXPECT_EQ(rows[3].substr(model), "unreachable: connection refused") << table;
}

class JobStatusOfARealJob : public mlt::test::JobFixture {};

TEST_P(JobStatusOfARealJob, ARunningThenFinishedJobAndAMissingDir) {
    mlt::test::LocalRemote r(shell());
    EXPECT_TRUE(mlt::JobDir(r, dir_ + "/missing", "m").query_jobs().empty());
    const long pgid = start(r, "while [ ! -f gate ]; do sleep 0.05; done; exit 4");
    std::vector<mlt::JobStatus> jobs = job(r).query_jobs();
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].model, "m");
    EXPECT_EQ(jobs[0].state, mlt::JobState::running);
    EXPECT_EQ(jobs[0].pgid, pgid);
    EXPECT_EQ(jobs[0].run_id, "run-1");
    EXPECT_EQ(jobs[0].phase, "running");
    EXPECT_TRUE(jobs[0].locked);
    EXPECT_GT(jobs[0].started, 0);
    EXPECT_GE(jobs[0].remote_now, jobs[0].started);
    std::ofstream(dir_ + "/gate").put('\n');
    std::string log;
    mlt::test::follow_to_end(r, dir_, log);
    // The follow recorded phase finished; another model's dir is listed with every model's.
    std::filesystem::create_directories(dir_ + "/.mlt/other");
    jobs = job(r).query_jobs();
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].state, mlt::JobState::finished);
    EXPECT_EQ(jobs[0].exit_status, 4);
    EXPECT_GT(jobs[0].logged, 0);
    EXPECT_TRUE(mlt::JobDir(r, dir_, "none").query_jobs().empty());
    EXPECT_EQ(mlt::query_jobs(r, dir_).size(), 2u);
}

INSTANTIATE_JOB_SHELLS(JobStatusOfARealJob);

}  // namespace

TEST(DescribeExitStatus, NamesTheSignalOfAKilledProcess) {
    EXPECT_EQ(mlt::describe_exit_status(0), "exit status 0");
    EXPECT_EQ(mlt::describe_exit_status(3), "exit status 3");
    EXPECT_EQ(mlt::describe_exit_status(128), "exit status 128");
    EXPECT_EQ(mlt::describe_exit_status(137),
              "exit status 137 (killed by SIGKILL; out of memory? see dmesg on the remote)");
    EXPECT_EQ(mlt::describe_exit_status(143), "exit status 143 (killed by SIGTERM)");
    // mlt's own stop sent the signal: no guess at its cause.
    EXPECT_EQ(mlt::describe_exit_status(137, true),
              "exit status 137 (killed by SIGKILL, sent by mlt's stop)");
    EXPECT_EQ(mlt::describe_exit_status(143, true),
              "exit status 143 (killed by SIGTERM, sent by mlt's stop)");
    EXPECT_EQ(mlt::describe_exit_status(139), "exit status 139 (killed by SIGSEGV)");
    EXPECT_EQ(mlt::describe_exit_status(129), "exit status 129 (killed by SIGHUP)");
    EXPECT_EQ(mlt::describe_exit_status(159), "exit status 159 (killed by SIGSYS)");
    EXPECT_EQ(mlt::describe_exit_status(160), "exit status 160");
}
