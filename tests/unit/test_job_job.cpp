// The job protocol against a real local shell (LocalRemote): lock, wrapper, start, follow, stop.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <tuple>

#include "job_fixture.h"
#include "local_remote.h"
#include "mlt/commands/job_commands.h"
#include "mlt/commands/train.h"
#include "mlt/job/job.h"
#include "mlt/job/status.h"
#include "mlt/util/paths.h"
#include "wait_until.h"

namespace fs = std::filesystem;

namespace {

using mlt::test::follow_to_end;
using mlt::test::group_alive;
using mlt::test::wait_until;

class JobProtocol : public mlt::test::JobFixture {};

// A python3 that only makes venvs (no network in tests): `python3 -m venv DIR` writes
// DIR/bin/activate with `activate` and DIR/bin/pip with `pip`.
void write_fake_venv_python(const std::string& bin, const std::string& activate,
                            const std::string& pip) {
    fs::create_directories(bin);
    mlt::write_file_atomic(bin + "/activate.src", activate, 0644);
    mlt::write_file_atomic(bin + "/pip.src", pip, 0755);
    mlt::write_file_atomic(bin + "/python3",
                           "#!/bin/sh\n"
                           "[ \"$1\" = -m ] && [ \"$2\" = venv ] || exit 1\n"
                           "mkdir -p \"$3/bin\"\n"
                           "cp \"$(dirname \"$0\")/activate.src\" \"$3/bin/activate\"\n"
                           "cp \"$(dirname \"$0\")/pip.src\" \"$3/bin/pip\"\n",
                           0755);
}

TEST_P(JobProtocol, CommandsAndTheShTheyStartRunUnderTheTestsShell) {
    // The parameter is no label: the command's shell, and the `sh` it starts (as the job's
    // launch does), are that program (`; :`: a shell may exec its last command).
    mlt::test::LocalRemote r(shell());
    const mlt::RemoteOutput out = r.run("readlink /proc/$$/exe; sh -c 'readlink /proc/$$/exe; :'");
    ASSERT_EQ(out.exit_status, 0) << out.err;
    const std::string program = GetParam();
    std::istringstream lines(out.out);
    std::string line;
    int seen = 0;
    for (; std::getline(lines, line); ++seen)
        EXPECT_EQ(fs::path(line).filename(), program) << out.out;
    EXPECT_EQ(seen, 2) << out.out;
}

TEST_P(JobProtocol, ExactlyOneOfConcurrentLaunchesGetsTheLock) {
    std::vector<std::future<bool>> results;
    for (int i = 0; i < 8; ++i)
        results.push_back(std::async(std::launch::async, [this, i] {
            mlt::test::LocalRemote r(shell());
            return job(r).acquire_run(new_run(wrapper("run-" + std::to_string(i), "true")));
        }));
    int winners = 0;
    for (auto& f : results) winners += f.get() ? 1 : 0;
    EXPECT_EQ(winners, 1);
    const std::string lock = read(".mlt/m/lock");
    EXPECT_NE(lock.find("phase=uploading\n"), std::string::npos) << lock;
    // The lock and the run_id file name the same (winning) run.
    const std::string run = read(".mlt/m/run_id");
    EXPECT_NE(lock.find("run=" + run), std::string::npos) << lock << run;
    mlt::test::LocalRemote r(shell());
    job(r).release_run("someone-else");  // not theirs: nothing happens
    EXPECT_TRUE(exists(".mlt/m/lock"));
    EXPECT_EQ(job(r).stop_and_release(1), mlt::StopOutcome::none);
    EXPECT_TRUE(job(r).acquire_run(new_run(wrapper("again", "true"))));
}

TEST_P(JobProtocol, ANewRunMovesThePreviousRunAndItsArchiveAside) {
    mlt::test::LocalRemote r(shell());
    start(r, "echo old > m.mltk.zip; echo old-run", {}, "old");
    std::string log;
    follow_to_end(r, dir_, log);
    ASSERT_TRUE(exists(".mlt/m/sha256"));
    job(r).release_run("old");

    // The next run takes the lock: nothing of the old run is left beside it.
    ASSERT_TRUE(job(r).acquire_run(new_run(wrapper("new", "true"))));
    for (const char* f : {"pid", "exit_status", "sha256", "started"})
        EXPECT_FALSE(exists(std::string(".mlt/m/") + f)) << f;
    EXPECT_FALSE(exists("m.mltk.zip")) << "the old archive would pass for the new run's";
    EXPECT_EQ(read(".mlt/m/previous/m.mltk.zip"), "old\n");
    EXPECT_EQ(read(".mlt/m/previous/run_id"), "old\n");
    EXPECT_EQ(read(".mlt/m/run_id"), "new\n");
    EXPECT_EQ(read(".mlt/m/console.log"), "");
    const mlt::JobResult result = job(r).read_job_result();
    EXPECT_EQ(result.run_id, "new");
    EXPECT_FALSE(result.exit_status);
    EXPECT_TRUE(result.sha256.empty());
    // A retry of the same run (its reply was lost) finds the lock its own and keeps previous/.
    EXPECT_TRUE(job(r).acquire_run(new_run(wrapper("new", "true"))));
    EXPECT_EQ(read(".mlt/m/previous/run_id"), "old\n");
    // Another run does not get it.
    EXPECT_FALSE(job(r).acquire_run(new_run(wrapper("third", "true"))));
}

TEST_P(JobProtocol, AFollowStopsAsSoonAsTheJobDirIsTakenOver) {
    mlt::test::LocalRemote r(shell());
    start(r, "echo first; while [ ! -f gate ]; do sleep 0.05; done");
    const std::string run = "run-1";
    std::string log;
    // A segment of 60 s: it must not run to its end once another run owns the dir.
    auto follow = std::async(std::launch::async, [&] {
        mlt::test::LocalRemote other_shell(shell());
        return job(other_shell).follow_log(mlt::Task::job, &run, 0, 60, [&](std::string_view d) {
            log += d;
        });
    });
    ASSERT_TRUE(
        wait_until([&] { return read(".mlt/m/console.log").find("first") != std::string::npos; }));
    std::ofstream(dir_ + "/.mlt/m/run_id", std::ios::trunc) << "newer\n";
    try {
        follow.get();
        FAIL() << "followed a log that is no longer this run's";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.code(), mlt::exit_code::kConflict) << e.what();
    }
    std::ofstream(dir_ + "/gate").put('\n');
}

TEST_P(JobProtocol, NoStartOnceTheLockWasReleased) {
    mlt::test::LocalRemote r(shell());
    mlt::WrapperSpec w = wrapper("run-1", "echo launched > launched.txt");
    ASSERT_TRUE(job(r).acquire_run(new_run(w)));
    // `mlt ssh ... stop m` while the run uploaded
    EXPECT_EQ(job(r).stop_and_release(1), mlt::StopOutcome::none);
    EXPECT_THROW(job(r).start_job("run-1"), mlt::Error);
    EXPECT_FALSE(exists(".mlt/m/started"));
}

TEST_P(JobProtocol, RunsStartupThenTrainingAndRecordsStatusAndLog) {
    mlt::test::LocalRemote r(shell());
    long pgid = start(r, "echo out; echo err >&2; exit 7");
    EXPECT_GT(pgid, 0);
    std::string log;
    const std::string run = "run-1";
    uint64_t offset = follow_to_end(r, dir_, log, &run);
    EXPECT_EQ(offset, log.size());
    EXPECT_NE(log.find("startup-ran\n"), std::string::npos) << log;
    EXPECT_NE(log.find("out\n"), std::string::npos);
    EXPECT_NE(log.find("err\n"), std::string::npos);  // stderr lands in the console log too
    EXPECT_NE(log.find("job finished with exit status 7\n"), std::string::npos) << log;
    EXPECT_EQ(log, read(".mlt/m/console.log"));  // the follow reached the end by itself
    const mlt::JobResult result = job(r).read_job_result();
    EXPECT_EQ(result.exit_status, 7);
    EXPECT_EQ(result.run_id, "run-1");
    EXPECT_TRUE(result.sha256.empty());
    // The follow of the run's job saw its end: the lock says so.
    EXPECT_NE(read(".mlt/m/lock").find("phase=finished"), std::string::npos);
    EXPECT_TRUE(fs::is_directory(dir_ + "/logs"));  // MLT_LOG_DIR created
    // Reading again from the end gives nothing new: byte offsets, no repeats.
    std::string more;
    job(r).read_log(mlt::Task::job, offset, [&](std::string_view d) { more += d; });
    EXPECT_EQ(more, "");
}

TEST_P(JobProtocol, AFollowSegmentEndsOnTimeAndTheNextContinuesAtTheOffset) {
    mlt::test::LocalRemote r(shell());
    // Prints a line, waits for a gate file, prints another.
    start(r, "echo first; while [ ! -f gate ]; do sleep 0.05; done; echo second");
    // The segment must find the first line: wait for it to be written (on a loaded machine
    // the job may take longer to print it than a segment lasts).
    ASSERT_TRUE(wait_until([&] {
        return exists(".mlt/m/console.log") &&
               read(".mlt/m/console.log").find("first\n") != std::string::npos;
    }));
    std::string log;
    auto step =
        job(r).follow_log(mlt::Task::job, nullptr, 0, 1, [&](std::string_view d) { log += d; });
    EXPECT_FALSE(step.ended);  // the job waits for the gate: the segment ran out of time
    EXPECT_NE(log.find("first\n"), std::string::npos) << log;
    std::ofstream(dir_ + "/gate").put('\n');
    follow_to_end(r, dir_, log, nullptr, step.offset);
    EXPECT_EQ(log, read(".mlt/m/console.log"));
}

// A follow waits on the wrapper's lock of `running` between its looks, and wakes as the job
// ends: the wrapper holds it while it runs, and nothing the training starts inherits it (a
// process left behind would keep the follow waiting its full naps).
TEST_P(JobProtocol, TheWrapperHoldsItsRunningLockAloneUntilTheJobEnds) {
    mlt::test::LocalRemote r(shell());
    start(r, "ls -l /proc/self/fd/ > fds.txt; while [ ! -f gate ]; do sleep 0.05; done");
    ASSERT_TRUE(wait_until([&] { return exists("fds.txt"); }));
    EXPECT_EQ(r.run("cd " + dir_ + " && flock -n .mlt/m/running true").exit_status, 1)
        << "the running job's wrapper does not hold its lock";
    EXPECT_EQ(read("fds.txt").find("running"), std::string::npos) << read("fds.txt");
    std::ofstream(dir_ + "/gate").put('\n');
    std::string log;
    follow_to_end(r, dir_, log);
    EXPECT_EQ(log, read(".mlt/m/console.log"));
    EXPECT_EQ(r.run("cd " + dir_ + " && flock -n .mlt/m/running true").exit_status, 0);
}

// A job whose wrapper holds no lock (an older wrapper, a host without flock): the follow
// finds that out and sleeps between its looks instead, and still sees the whole log and the
// end.
TEST_P(JobProtocol, AFollowOfAJobWithoutItsLockStillSeesItsEnd) {
    mlt::test::LocalRemote r(shell());
    start(r, "echo first; while [ ! -f gate ]; do sleep 0.05; done; echo second");
    fs::remove(dir_ + "/.mlt/m/running");  // the wrapper's lock is on a file no longer there
    std::string log;
    auto step =
        job(r).follow_log(mlt::Task::job, nullptr, 0, 1, [&](std::string_view d) { log += d; });
    EXPECT_FALSE(step.ended);
    std::ofstream(dir_ + "/gate").put('\n');
    follow_to_end(r, dir_, log, nullptr, step.offset);
    EXPECT_EQ(log, read(".mlt/m/console.log"));
    EXPECT_NE(log.find("second\n"), std::string::npos) << log;
}

// A follow of a job that was never started says so; it is not taken for a remote dir that is
// gone (the two statuses were once the same number).
TEST_P(JobProtocol, AFollowOfAJobNeverStartedSaysSoAndNotThatTheDirIsGone) {
    mlt::test::LocalRemote r(shell());
    ASSERT_TRUE(job(r).acquire_run(new_run(wrapper("run-1", "echo never"))));
    const std::string run_id = "run-1";
    try {
        job(r).follow_log(mlt::Task::job, &run_id, 0, 1, [](std::string_view) {});
        ADD_FAILURE() << "a follow of a job never started returned";
    } catch (const mlt::Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("it has not started"), std::string::npos) << what;
        EXPECT_NE(e.kind(), mlt::ErrorKind::gone) << what;
    }
}

TEST_P(JobProtocol, StartingTwiceStartsOneJob) {
    mlt::test::LocalRemote r(shell());
    const long pgid = start(r, "echo launched >> launches.txt; sleep 1000");
    // A retry after a lost reply, or a --resume of a run cut while starting.
    EXPECT_EQ(job(r).start_job("run-1"), pgid);
    ASSERT_TRUE(wait_until([&] { return exists("launches.txt"); }));
    EXPECT_EQ(read("launches.txt"), "launched\n");
    EXPECT_TRUE(job(r).stop_job(1, nullptr));
}

TEST_P(JobProtocol, AnotherRunsJobDirIsRefusedAsAConflict) {
    mlt::test::LocalRemote r(shell());
    start(r, "sleep 1000", {}, "mine");
    const std::string other = "other";
    try {
        job(r).follow_log(mlt::Task::job, &other, 0, 1, [](std::string_view) {});
        FAIL() << "followed another run's log";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.code(), mlt::exit_code::kConflict) << e.what();
    }
    EXPECT_THROW(job(r).start_job(other), mlt::Error);
    EXPECT_THROW(job(r).stop_job(1, &other), mlt::Error);
    EXPECT_THROW(job(r).set_run_phase(other, mlt::RunPhase::finished), mlt::Error);
    EXPECT_TRUE(group_alive(std::stol(read(".mlt/m/pid")))) << "the other run's stop hit it";
    const std::string mine = "mine";
    EXPECT_TRUE(job(r).stop_job(1, &mine));
}

TEST_P(JobProtocol, AJobWhoseDirWasTakenOverRecordsNothing) {
    mlt::test::LocalRemote r(shell());
    start(r, "while [ ! -f gate ]; do sleep 0.05; done; echo late > m.mltk.zip", {}, "old");
    // A newer run took the dir (as a --force does when a job could not be killed).
    std::ofstream(dir_ + "/.mlt/m/run_id", std::ios::trunc) << "newer\n";
    std::ofstream(dir_ + "/gate").put('\n');
    const long pgid = std::stol(read(".mlt/m/pid"));
    EXPECT_TRUE(wait_until([&] { return !group_alive(pgid); }));
    EXPECT_FALSE(exists(".mlt/m/exit_status"));
    EXPECT_FALSE(exists(".mlt/m/sha256"));
}

TEST_P(JobProtocol, StartupCdDoesNotLoseTheStatusOrTheArchiveHash) {
    mlt::test::LocalRemote r(shell());
    mlt::WrapperSpec w = wrapper("run-1", "echo zip > \"$OLDPWD/m.mltk.zip\"; exit 3");
    w.startup_cmds = {"mkdir -p elsewhere && cd elsewhere"};
    ASSERT_TRUE(job(r).acquire_run(new_run(w)));
    job(r).start_job("run-1");
    std::string log;
    follow_to_end(r, dir_, log);
    const mlt::JobResult result = job(r).read_job_result();
    EXPECT_EQ(result.exit_status, 3) << log;
    EXPECT_EQ(result.sha256.size(), 64u) << log;
}

// MLTK's shell: one `bash --login` batch, so the login profile's variables, a `cd`, plain
// variables and bash syntax carry from startup_cmds into the training; mlt's own records
// do not depend on any of it.
TEST_P(JobProtocol, UserCommandsRunAsOneLoginBatch) {
    const std::string home = dir_ + "/home";
    fs::create_directories(home);
    mlt::write_file_atomic(home + "/.bash_profile", "export MLT_FROM_PROFILE=from-profile\ncd /\n",
                           0644);
    const char* old_home = std::getenv("HOME");
    const std::string saved = old_home ? old_home : "";
    ::setenv("HOME", home.c_str(), 1);
    mlt::test::LocalRemote r(shell());
    mlt::WrapperSpec w =
        wrapper("run-1",
                "echo \"[$MLT_FROM_PROFILE][$X][$(basename \"$PWD\")][$MLT_LOG_DIR]\"; "
                "printf zip > \"$MLT_REMOTE_DIR/m.mltk.zip\"; [[ $X == 42 ]] && exit 7");
    w.startup_cmds = {"mkdir -p sub && cd sub", "X=42", "[[ -n $X ]] && echo bash-syntax-ok"};
    ASSERT_TRUE(job(r).acquire_run(new_run(w)));
    job(r).start_job("run-1");
    std::string log;
    follow_to_end(r, dir_, log);
    ::setenv("HOME", saved.c_str(), 1);
    EXPECT_NE(log.find("bash-syntax-ok\n"), std::string::npos) << log;
    EXPECT_NE(log.find("[from-profile][42][sub][" + dir_ + "/logs]"), std::string::npos) << log;
    const mlt::JobResult result = job(r).read_job_result();
    EXPECT_EQ(result.exit_status, 7) << log;
    EXPECT_EQ(result.sha256.size(), 64u) << log;
    EXPECT_EQ(result.log_dir, dir_ + "/logs");
}

// Unset remote_log_dir with MLTK's train_cmd: the remote MLTK is asked; without one, MLTK's
// default under MLTK_CACHE_DIR. Either way it is recorded for collection.
TEST_P(JobProtocol, AnOpenLogDirIsAskedOfTheRemoteMltk) {
    mlt::test::LocalRemote r(shell());
    const std::string fake = dir_ + "/fake";
    fs::create_directories(fake + "/mltk");
    mlt::write_file_atomic(fake + "/mltk/__init__.py", "", 0644);
    mlt::write_file_atomic(fake + "/mltk/core.py",
                           "class M:\n    log_dir = '/asked/' + 'of/mltk'\n"
                           "def load_mltk_model(name):\n    assert name == 'm'\n    return M()\n",
                           0644);
    mlt::WrapperSpec w = wrapper("run-1", "echo \"dir=$MLT_LOG_DIR\"");
    w.log_dir.clear();
    w.mltk_train = true;
    w.environment = {{"PYTHONPATH", fake}};
    w.startup_cmds = {};
    ASSERT_TRUE(job(r).acquire_run(new_run(w)));
    job(r).start_job("run-1");
    std::string log;
    follow_to_end(r, dir_, log);
    EXPECT_EQ(job(r).read_job_result().log_dir, "/asked/of/mltk") << log;

    // No MLTK there: MLTK's default, under the remote MLTK_CACHE_DIR.
    job(r).release_run("run-1");
    w.run_id = "run-2";
    w.environment = {{"MLTK_CACHE_DIR", dir_ + "/cache"}, {"PYTHONPATH", dir_ + "/none"}};
    ASSERT_TRUE(job(r).acquire_run(new_run(w)));
    job(r).start_job("run-2");
    log.clear();
    follow_to_end(r, dir_, log);
    EXPECT_EQ(job(r).read_job_result().log_dir, dir_ + "/cache/models/m") << log;
    EXPECT_TRUE(fs::is_directory(dir_ + "/cache/models/m"));
}

// A new venv as MLTK makes one: created once, the pinned MLTK tried first, the latest when
// the pinned one does not install, then activated for startup_cmds and the training. A fake
// python3 (no network in tests) makes the venv and logs every pip call.
TEST_P(JobProtocol, ANewVenvGetsMltkPinnedThenLatest) {
    const std::string bin = dir_ + "/fakebin";
    write_fake_venv_python(bin, "export MLT_IN_VENV=yes\n",
                           "#!/bin/sh\n"
                           "echo \"pip $*\" >> \"$(dirname \"$0\")/../../pip.log\"\n"
                           "case \"$*\" in *==*) exit 1 ;; esac\n");
    mlt::test::LocalRemote r(shell());
    mlt::WrapperSpec w = wrapper("run-1", "echo \"venv=$MLT_IN_VENV\"");
    w.create_venv = true;
    std::tie(w.venv_packages, w.venv_fallback_packages) = mlt::default_venv_packages("0.20.0");
    w.environment = {{"PATH", bin + ":$PATH"}};
    ASSERT_TRUE(job(r).acquire_run(new_run(w)));
    job(r).start_job("run-1");
    std::string log;
    follow_to_end(r, dir_, log);
    EXPECT_EQ(job(r).read_job_result().exit_status, 0) << log;
    EXPECT_NE(log.find("venv=yes"), std::string::npos) << log;
    EXPECT_EQ(read("pip.log"),
              "pip install wheel silabs-mltk==0.20.0\n"
              "pip install --upgrade wheel silabs-mltk\n");
    // Without a local MLTK: only the latest.
    EXPECT_EQ(mlt::default_venv_packages("").first,
              (std::vector<std::string>{"wheel", "silabs-mltk"}));
    EXPECT_TRUE(mlt::default_venv_packages("").second.empty());
}

// A venv whose package step failed is not complete: the next run installs again instead of
// reusing it and failing with `command not found` (exit 127) forever. The fake pip fails its
// first call, as a network hiccup would, and installs a `fake_mltk` command on the next.
TEST_P(JobProtocol, AVenvWhoseInstallFailedIsRepairedByTheNextRun) {
    const std::string bin = dir_ + "/fakebin";
    // pip fails its first call; later ones install the command `fake_mltk` into the venv.
    write_fake_venv_python(
        bin, "PATH=\"$MLT_REMOTE_DIR/.venv/bin:$PATH\"\n",
        "#!/bin/sh\n"
        "venv=$(dirname \"$0\")/..\n"
        "echo \"pip $*\" >> \"$venv/../pip.log\"\n"
        "[ -e \"$venv/../pip.failed\" ] || { : > \"$venv/../pip.failed\"; exit 1; }\n"
        "printf '#!/bin/sh\\necho fake-mltk-ran\\n' > \"$venv/bin/fake_mltk\"\n"
        "chmod +x \"$venv/bin/fake_mltk\"\n");
    mlt::test::LocalRemote r(shell());
    const auto run = [&](const std::string& id) {
        mlt::WrapperSpec w = wrapper(id, "fake_mltk");
        w.create_venv = true;
        w.venv_packages = {"silabs-mltk"};
        w.environment = {{"PATH", bin + ":$PATH"}};
        EXPECT_TRUE(job(r).acquire_run(new_run(w)));
        job(r).start_job(id);
        std::string log;
        follow_to_end(r, dir_, log);
        job(r).release_run(id);
        return log;
    };
    const std::string first = run("run-1");
    EXPECT_EQ(job(r).read_job_result().exit_status, 1) << first;
    const std::string second = run("run-2");
    EXPECT_EQ(job(r).read_job_result().exit_status, 0) << second;
    EXPECT_NE(second.find("fake-mltk-ran"), std::string::npos) << second;
    EXPECT_EQ(read("pip.log"), "pip install silabs-mltk\npip install silabs-mltk\n");
    // Complete now: a third run installs nothing.
    run("run-3");
    EXPECT_EQ(read("pip.log"), "pip install silabs-mltk\npip install silabs-mltk\n");
}

// The training command not found in a venv (exit 127): the console log names the venv and
// what to do, instead of the shell's bare `command not found`.
TEST_P(JobProtocol, ACommandNotFoundInTheVenvNamesTheVenvAndTheFix) {
    mlt::test::LocalRemote r(shell());
    mlt::WrapperSpec w = wrapper("run-1", "mlt_no_such_command_xyz");
    w.create_venv = true;
    w.venv_packages = {};
    fs::create_directories(dir_ + "/.venv/bin");
    mlt::write_file_atomic(dir_ + "/.venv/bin/activate", "true\n", 0644);
    ASSERT_TRUE(job(r).acquire_run(new_run(w)));
    job(r).start_job("run-1");
    std::string log;
    follow_to_end(r, dir_, log);
    EXPECT_EQ(job(r).read_job_result().exit_status, 127) << log;
    EXPECT_NE(log.find("was not found in the venv " + dir_ + "/.venv"), std::string::npos) << log;
    EXPECT_NE(log.find("rm -rf"), std::string::npos) << log;
}

TEST_P(JobProtocol, FailingStartupStopsBeforeTraining) {
    mlt::test::LocalRemote r(shell());
    mlt::WrapperSpec w = wrapper("run-1", "echo training-ran");
    w.startup_cmds = {"false", "echo second-startup"};
    ASSERT_TRUE(job(r).acquire_run(new_run(w)));
    job(r).start_job("run-1");
    std::string log;
    follow_to_end(r, dir_, log);
    EXPECT_EQ(log.find("second-startup\n"), std::string::npos) << log;
    EXPECT_EQ(log.find("training-ran\n"), std::string::npos) << log;
    EXPECT_EQ(job(r).read_job_result().exit_status, 1);
}

// As MLTK's `export NAME="value"`: variables, command substitution and backquotes expand on
// the remote, in the login shell's environment; quotes inside stay.
TEST_P(JobProtocol, EnvironmentExpandsAsMltksExport) {
    mlt::test::LocalRemote r(shell());
    start(r, "printf '[%s][%s][%s][%s][%s]\\n' \"$A\" \"$B\" \"$C\" \"$MLT_MODEL\" \"$MLT_RUN_ID\"",
          {{"A", "two words \"quoted\" it's"},
           {"B", "$HOME/data"},
           {"C", "$(echo sub) `echo tick`"}});
    std::string log;
    follow_to_end(r, dir_, log);
    const std::string home = mlt::home_dir();
    EXPECT_NE(log.find("[two words \"quoted\" it's][" + home + "/data][sub tick][m][run-1]"),
              std::string::npos)
        << log;
}

TEST_P(JobProtocol, ShutdownRunsOncePerRunAndRecordsTheLastFailure) {
    mlt::test::LocalRemote r(shell());
    start(r, "true");
    std::string log;
    follow_to_end(r, dir_, log);
    const std::string script =
        mlt::make_shutdown_script({"m",
                                   "run-1",
                                   {{"WHO", "$USER"}},
                                   false,
                                   {"echo shut >> shut.txt", "false", "echo after >> shut.txt"},
                                   {},
                                   {}});
    EXPECT_TRUE(job(r).start_shutdown("run-1", script));
    EXPECT_FALSE(job(r).start_shutdown("run-1", script));  // a retry: not again
    std::string out;
    const std::string run = "run-1";
    uint64_t offset = 0;
    job(r).follow_to_end(mlt::Task::shutdown, &run, offset, 1,
                         [&](std::string_view d) { out += d; });
    EXPECT_EQ(read("shut.txt"), "shut\nafter\n");
    EXPECT_NE(out.find("shutdown command failed: false (exit status 1)"), std::string::npos) << out;
    EXPECT_EQ(job(r).read_shutdown_status(), 1);
}

TEST_P(JobProtocol, StopKillsTheWholeProcessGroup) {
    mlt::test::LocalRemote r(shell());
    // The training leaves a grandchild behind and ignores TERM itself: only KILL ends it.
    long pgid =
        start(r, "sleep 1000 & echo $! > child.pid; trap '' TERM; while :; do sleep 0.1; done");
    ASSERT_TRUE(wait_until([&] { return fs::exists(dir_ + "/child.pid"); }));
    auto jobs = job(r).query_jobs();
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].state, mlt::JobState::running);
    EXPECT_EQ(jobs[0].pgid, pgid);
    EXPECT_EQ(jobs[0].run_id, "run-1");
    EXPECT_EQ(jobs[0].phase, "running");

    EXPECT_TRUE(job(r).stop_job(1));
    EXPECT_FALSE(group_alive(pgid));  // the wrapper, the TERM-proof loop and the grandchild
    EXPECT_EQ(job(r).read_job_result().exit_status, 137);  // recorded by the stopper
    EXPECT_FALSE(job(r).stop_job(1));                      // nothing left to stop
}

// A process that left the job's group (setsid) is still the job's: when the wrapper dies
// without its sweep (KILLed, as the OOM killer does) it keeps the model from a new run (lock
// or no lock), `status` shows it running, and a stop ends it and records so.
TEST_P(JobProtocol, AProcessThatLeftTheGroupIsStillTheJob) {
    mlt::test::LocalRemote r(shell());
    start(r,
          "setsid sh -c 'echo $$ > escaped.pid; exec sleep 1000' < /dev/null > /dev/null 2>&1 &\n"
          "i=0; while [ ! -s escaped.pid ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n"
          "kill -s KILL \"$(cat \"$MLT_JOB_DIR/pid\")\"");
    std::string log;
    follow_to_end(r, dir_, log);  // the wrapper has ended
    ASSERT_TRUE(wait_until([&] { return !read("escaped.pid").empty(); })) << log;
    const long escaped = std::strtol(read("escaped.pid").c_str(), nullptr, 10);
    ASSERT_GT(escaped, 1) << log;
    job(r).release_run("run-1");

    EXPECT_FALSE(job(r).acquire_run(new_run(wrapper("run-2", "true"))));
    EXPECT_FALSE(exists(".mlt/m/lock"));
    auto jobs = job(r).query_jobs();
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].state, mlt::JobState::running);

    EXPECT_EQ(job(r).stop_and_release(1), mlt::StopOutcome::stopped);
    std::ifstream stat("/proc/" + std::to_string(escaped) + "/stat");
    std::string line;
    std::getline(stat, line);  // gone, or a zombie (state Z after the ')')
    const auto close = line.rfind(')');
    EXPECT_TRUE(close == std::string::npos || line.compare(close + 2, 1, "Z") == 0)
        << "it survived the stop: " << line;
    EXPECT_EQ(job(r).read_job_result().stopped_with, 143);
    EXPECT_TRUE(job(r).acquire_run(new_run(wrapper("run-2", "true"))));
}

TEST_P(JobProtocol, TermIsRecordedByTheWrapper) {
    mlt::test::LocalRemote r(shell());
    start(r, "sleep 1000");
    EXPECT_TRUE(job(r).stop_job(5));
    EXPECT_EQ(job(r).read_job_result().exit_status, 143);
}

TEST(JobPlaceholders, FilledQuotedAndUnknownKept) {
    EXPECT_EQ(mlt::fill_placeholders("mltk train {model} --x {nope} {log_dir}{model}",
                                     {{"model", "'my model'"}, {"log_dir", "\"$MLT_LOG_DIR\""}}),
              "mltk train 'my model' --x {nope} \"$MLT_LOG_DIR\"'my model'");
}

INSTANTIATE_JOB_SHELLS(JobProtocol);

}  // namespace
