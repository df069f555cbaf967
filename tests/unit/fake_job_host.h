#pragma once
// An in-memory host for the run engine's tests: the job protocol of one model (lock, start,
// follow, result, stop, shutdown, release) as plain data, with a link that can be cut at any
// call and a journal of every call. The shell protocol itself is tested against a real shell
// (test_job_job.cpp); this lets the orchestration tests run each cut point in microseconds.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlt/job/status.h"
#include "mlt/ssh/connection.h"
#include "mlt/train/run/remote_job.h"
#include "mlt/train/run/train_run.h"
#include "transfer_fixtures.h"

namespace mlt::test {

// How the link (or the client) fails at the chosen call.
enum class Cut {
    before,         // the command never reached the host
    after,          // it ran to its end; its reply was lost
    midway,         // it ran; half of its output arrived
    killed_before,  // the client died as it was about to send it
    killed_after,   // the client died after it ran, before the reply arrived
};

// Thrown instead of a link error, to end a TrainRun as a kill -9 ends mlt.
struct Killed {};

// What a job on the fake host does: it prints `lines`, one per follow segment, then ends
// with `exit_status`.
struct FakeJobScript {
    std::vector<std::string> lines = {"line one\n", "line two\n", "line three\n"};
    int exit_status = 0;
    // The first attempt is lost (its processes gone, no exit status) after this many lines.
    std::optional<size_t> lost_after;
};

class FakeJobHost : public RemoteJob {
  public:
    explicit FakeJobHost(std::string name = "me@fake:22") : name_(std::move(name)) {}

    static Error lost() { return Error(ErrorKind::disconnected, "Socket error: disconnected"); }

    const std::string& name() const { return name_; }

    // --- the link and the journal ---
    bool up = true;
    int cut_at = 0;  // 1-based index of the call to fail; 0: none
    Cut mode = Cut::before;
    std::vector<std::string> calls;               // every call that reached the link
    std::vector<std::string>* journal = nullptr;  // shared with other hosts: "name: call"
    // Fails the call-th call (1-based) as `how` says.
    void cut(size_t call, Cut how) {
        cut_at = static_cast<int>(call);
        mode = how;
    }

    // --- what the host holds ---
    FakeJobScript script;
    struct Lock {
        std::string run_id;
        RunPhase phase = RunPhase::uploading;
    };
    std::optional<Lock> lock_file;
    std::string job_run_id;  // the run the job dir belongs to
    bool started = false;    // the start marker
    int attempt = 1;         // the attempt the lock records (restarts of a lost job)
    long started_epoch = 0;  // the lock's start time (JobStatus::started); 0: unknown
    bool alive = false;      // the job's process group
    size_t printed = 0;      // lines of the script printed so far
    std::string console_log;
    std::optional<int> exit_status;
    std::optional<int> stopped_with;
    bool shutdown_started = false;
    std::string shutdown_log;
    std::optional<int> shutdown_exit;

    // --- counters of effects ---
    int launches = 0, uploads = 0, cleans = 0, collects = 0, shutdown_runs = 0, stops = 0;
    std::map<std::string, std::vector<UploadItem>> uploaded;  // the last upload's items
    std::string collected_run;                                // the run id of the last collect
    std::vector<int> follow_seconds;  // the bound of every follow of the job
    // Called by a follow of the job that finds it running, with the segment's bound: a test
    // lets its clock pass as a segment that waited so long would.
    std::function<void(int seconds)> on_follow;

  private:
    // One remote command: refused while the link is down; the chosen call fails as `mode`
    // says, before or after its effect on the host.
    template <class Effect>
    auto call(const std::string& what, Effect effect) {
        if (!up) throw lost();
        calls.push_back(what);
        if (journal) journal->push_back(name_ + ": " + what);
        const bool cut = static_cast<int>(calls.size()) == cut_at;
        if (cut && mode == Cut::killed_before) throw Killed{};
        if (cut && mode == Cut::before) {
            up = false;
            throw lost();
        }
        auto result = effect(cut && mode == Cut::midway);
        if (cut && mode == Cut::killed_after) throw Killed{};
        if (cut) {
            up = false;
            throw lost();
        }
        return result;
    }

  public:
    std::vector<JobStatus> status() override {
        return call("status", [&](bool) {
            if (!lock_file && job_run_id.empty()) return std::vector<JobStatus>{};
            JobStatus s;
            s.model = "m";
            s.locked = lock_file.has_value();
            s.phase = lock_file ? to_string(lock_file->phase) : "";
            s.run_id = job_run_id;
            s.pgid = started ? 4242 : 0;
            s.exit_status = exit_status;
            s.attempt = attempt;
            s.started = started_epoch;
            s.state = job_state(s.locked, s.phase, s.pgid, alive, exit_status.has_value());
            return std::vector<JobStatus>{s};
        });
    }

    bool lock(const NewRun& run) override {
        return call("lock", [&](bool) {
            if (lock_file) return lock_file->run_id == run.run_id;  // a retry completes it
            lock_file = Lock{run.run_id, RunPhase::uploading};
            reset_job_dir(run.run_id);
            attempt = run.attempt;  // a run that continues here after its host was lost
            return true;
        });
    }

    void set_phase(const std::string& run_id, RunPhase phase) override {
        call("set_phase " + std::string(to_string(phase)), [&](bool) {
            if (!lock_file || lock_file->run_id != run_id) throw foreign(run_id);
            lock_file->phase = phase;
            return 0;
        });
    }

    void release(const std::string& run_id) override {
        call("release", [&](bool) {
            if (lock_file && lock_file->run_id == run_id) lock_file.reset();
            return 0;
        });
    }

    void discard() override {
        call("discard", [&](bool) {
            lock_file.reset();
            reset_job_dir("");
            return 0;
        });
    }

    void clean(const std::string&, const std::string&) override {
        call("clean", [&](bool) { return ++cleans; });
    }

    SyncResult upload(const std::map<std::string, std::vector<UploadItem>>& items) override {
        return call("upload", [&](bool) {
            ++uploads;
            uploaded = items;
            // The console copy pushed after a failover becomes the job's console log.
            for (const auto& [base, list] : items)
                for (const auto& item : list)
                    if (item.remote_path == "console.log" && base.size() >= 6 &&
                        base.compare(base.size() - 6, 6, ".mlt/m") == 0)
                        console_log = slurp(item.local_path);
            SyncResult r;
            r.moved.files = 1;
            r.moved.bytes = 5;
            return r;
        });
    }

    long start(const std::string& run_id) override {
        return call("start", [&](bool) {
            check_run(run_id);
            if (!started) {  // at most one launch per run: the marker
                started = alive = true;
                ++launches;
                if (attempt > 1)
                    console_log += "==== mlt: attempt " + std::to_string(attempt) + " of run " +
                                   run_id +
                                   " (continued on this host: the previous one was lost) ====\n";
                if (lock_file) lock_file->phase = RunPhase::running;
            }
            return 4242L;
        });
    }

    // As restart_job: only a lost job of the run, at most one launch per attempt.
    long restart(const std::string& run_id, int next) override {
        return call("restart", [&](bool) {
            check_run(run_id);
            if (attempt == next) return 4343L;  // a retry: that attempt's job
            const bool collected = lock_file && lock_file->phase == RunPhase::collected;
            if (!started || alive || exit_status || collected || attempt != next - 1)
                throw Error(ErrorKind::conflict, "cannot restart: the job is not lost");
            attempt = next;
            alive = true;
            printed = 0;
            ++launches;
            console_log += "==== mlt: attempt " + std::to_string(next) + " of run " + run_id +
                           " (the job was lost) ====\n";
            if (lock_file) lock_file->phase = RunPhase::running;
            return 4343L;
        });
    }

    bool stop(int, const std::string* run_id) override {
        return call("stop", [&](bool) {
            if (run_id) check_run(*run_id);
            ++stops;
            if (!alive) return false;
            alive = false;
            exit_status = stopped_with = 143;
            return true;
        });
    }

    FollowStep follow(Task task, const std::string* run_id, uint64_t offset, int seconds,
                      const OutputSink& sink) override {
        const bool job = task == Task::job;
        return call(job ? "follow" : "follow shutdown", [&](bool midway) {
            if (run_id) check_run(*run_id);
            if (job && !started) throw Error(ErrorKind::remote, "the job was never started");
            if (job) follow_seconds.push_back(seconds);
            if (job && alive && on_follow) on_follow(seconds);
            if (job) advance();
            const std::string& log = job ? console_log : shutdown_log;
            const std::string out = offset < log.size() ? log.substr(offset) : "";
            const bool ended = job ? !alive : shutdown_exit.has_value();
            // At the end, the same command brings the result and, for the job, records
            // phase finished (only over running: a follow left behind cannot undo more).
            std::optional<JobResult> end;
            if (ended && job && run_id) {
                if (!lock_file || lock_file->run_id != *run_id) throw foreign(*run_id);
                if (lock_file->phase == RunPhase::running) lock_file->phase = RunPhase::finished;
            }
            if (ended) {
                end = job_result();
                if (!job) end->exit_status = shutdown_exit;
            }
            if (midway) {
                if (sink && !out.empty()) sink(std::string_view(out).substr(0, out.size() / 2));
                return FollowStep{};
            }
            if (sink && !out.empty()) sink(out);
            return FollowStep{offset + out.size(), ended, end};
        });
    }

    JobResult result() override {
        return call("result", [&](bool) { return job_result(); });
    }

    TransferStats collect(const TrainPlan&, const JobResult& result, Reporter&) override {
        return call("collect", [&](bool) {
            ++collects;
            collected_run = result.run_id;
            return TransferStats{1, 7};
        });
    }

    bool start_shutdown(const std::string& run_id, const std::string&,
                        bool record_collected) override {
        return call("start_shutdown", [&](bool) {
            check_run(run_id);
            if (record_collected) {
                if (!lock_file || lock_file->run_id != run_id) throw foreign(run_id);
                lock_file->phase = RunPhase::collected;
            }
            if (shutdown_started) return false;
            shutdown_started = true;
            ++shutdown_runs;
            shutdown_log = "shut\n";
            shutdown_exit = 0;
            return true;
        });
    }

    std::optional<int> shutdown_status() override {
        return call("shutdown_status", [&](bool) { return shutdown_exit; });
    }

  private:
    JobResult job_result() const {
        JobResult r;
        r.run_id = job_run_id;
        r.exit_status = exit_status;
        if (exit_status == 0) r.sha256 = "sha-of-" + job_run_id;
        r.training_started = started;
        r.stopped_with = stopped_with;
        return r;
    }

    // The job prints its next line, or ends once all are printed.
    void advance() {
        if (!alive) return;
        if (printed < script.lines.size()) {
            console_log += script.lines[printed++];
            if (attempt == 1 && script.lost_after == printed) {
                alive = false;  // the host restarted: nothing recorded
                return;
            }
            if (printed < script.lines.size()) return;
        }
        alive = false;
        exit_status = script.exit_status;
    }

    void reset_job_dir(const std::string& run_id) {
        job_run_id = run_id;
        started = alive = false;
        attempt = 1;
        printed = 0;
        console_log.clear();
        exit_status.reset();
        stopped_with.reset();
        shutdown_started = false;
        shutdown_log.clear();
        shutdown_exit.reset();
    }

    void check_run(const std::string& run_id) const {
        if (job_run_id != run_id) throw foreign(run_id);
    }

    Error foreign(const std::string& run_id) const {
        return foreign_run(name_, "m", run_id, "the job dir is run '" + job_run_id + "'s");
    }

    std::string name_;
};

// The link to a FakeJobHost: reconnecting brings it back, unless told otherwise.
class FakeHostConnection : public Connection {
  public:
    explicit FakeHostConnection(FakeJobHost& host) : host_(host) {}
    const std::string& name() const override { return host_.name(); }
    Remote& remote() override {
        if (!host_.up) throw FakeJobHost::lost();
        return unused_;
    }
    void reconnect() override {
        ++attempts;
        if (refuse) throw *refuse;
        if (!reachable) throw Error(ErrorKind::timeout, "timed out");
        host_.up = true;
    }
    int attempts = 0;
    bool reachable = true;
    std::optional<Error> refuse;

  private:
    // TrainRun opens the link with remote() and never runs a command on it directly.
    class UnusedRemote : public Remote {
      public:
        const std::string& name() const override { return name_; }
        RemoteOutput run(const std::string&, std::string_view) override {
            throw Error(ErrorKind::internal, "the run engine ran a command past its RemoteJob");
        }
        int stream(const std::string&, const InputSource&, const OutputSink&,
                   const OutputSink&) override {
            throw Error(ErrorKind::internal, "the run engine ran a command past its RemoteJob");
        }

      private:
        std::string name_ = "unused";
    };
    FakeJobHost& host_;
    UnusedRemote unused_;
};

}  // namespace mlt::test
