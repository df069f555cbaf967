#pragma once
// An in-memory host for the run engine's tests: the job protocol of one model (lock, start,
// follow, result, stop, shutdown, release) as plain data, with a link that can be cut at any
// call and a journal of every call. The shell protocol itself is tested against a real shell
// (test_job_job.cpp); this lets the orchestration tests run each cut point in microseconds.
// With `pipelined`, it offers JobPipelining as ShellJob does: commands sent ahead run on the
// host after the next command, in the order sent, each a call of the journal that can be cut;
// their replies wait until asked for, and are dropped when another command is asked first.
#include <any>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
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
    // A successful job records an archive (its sha256); false: it records none.
    bool records_archive = true;
    // The host's guard stops the job once all lines are printed, recording this
    // (guard.stop); empty: no guard stops it.
    std::string guard_stop;
};

class FakeJobHost : public RemoteJob, public JobPipelining {
  public:
    explicit FakeJobHost(std::string name = "me@fake:22") : name_(std::move(name)) {}

    // Offers JobPipelining (commands sent ahead, start tickets, the release with the follow).
    bool pipelined = false;
    JobPipelining* pipelining() override { return pipelined ? this : nullptr; }

    static Error lost() { return Error(ErrorKind::disconnected, "Socket error: disconnected"); }

    const std::string& name() const { return name_; }

    // --- the link and the journal ---
    bool up = true;
    int cut_at = 0;  // 1-based index of the call to fail; 0: none
    Cut mode = Cut::before;
    std::vector<std::string> calls;               // every call that reached the link
    std::vector<std::string>* journal = nullptr;  // shared with other hosts: "name: call"
    // Fails the call-th call (1-based) as `how` says. For a command sent ahead (its journal
    // name ends in " ahead"): before/after, it did not run / ran, and every reply of the
    // command it went with is lost; midway, it ran (a start: claimed only), the replies
    // before its own arrived, and the link is lost; killed_*: the client dies before / after
    // it ran.
    void cut(size_t call, Cut how) {
        cut_at = static_cast<int>(call);
        mode = how;
    }
    // Commands of a killed client that it sent ahead and that had not run yet: a silent link
    // may still deliver them. They run (errors ignored, journaled "<what> (stray)") just
    // before the first later call named in `strays_before`.
    std::set<std::string> strays_before;
    // The link came back: what was sent ahead on the old one is gone with it.
    void reconnected() {
        up = true;
        queued_.clear();
        replies_.clear();
    }

    // --- what the host holds ---
    FakeJobScript script;
    struct Lock {
        std::string run_id;
        RunPhase phase = RunPhase::uploading;
        std::string moved_to;  // mark_moved
    };
    std::optional<Lock> lock_file;
    std::optional<Lock> released_lock;  // `released`: the lock a follow of its run released
    bool retaken = false;               // `retaken`: no follow releases the lock any more
    std::set<std::string> tickets;      // start.ticket.*
    bool start_claimed_file = false;    // start.claimed
    bool files_current = true;          // the upload's test finds nothing to send
    bool logs_home = true;              // the remote log dir lists as the release expects
    std::string job_run_id;             // the run the job dir belongs to
    bool started = false;               // the start marker
    int attempt = 1;                    // the attempt the lock records (restarts of a lost job)
    long started_epoch = 0;             // the lock's start time (JobStatus::started); 0: unknown
    bool alive = false;                 // the job's process group
    size_t printed = 0;                 // lines of the script printed so far
    std::string console_log;
    std::optional<int> exit_status;
    std::optional<int> stopped_with;
    bool shutdown_started = false;
    std::string shutdown_log;
    std::optional<int> shutdown_exit;

    // --- counters of effects ---
    int launches = 0, uploads = 0, cleans = 0, collects = 0, shutdown_runs = 0, stops = 0;
    int follow_releases = 0;    // locks released by a follow
    int late_uploads = 0;       // uploads once the start was claimed or made: never
    int unlocked_collects = 0;  // collections without the run's lock: never
    std::map<std::string, std::vector<UploadItem>> uploaded;  // the last upload's items
    std::string collected_run;                                // the run id of the last collect
    std::vector<int> follow_seconds;  // the bound of every follow of the job
    // Called by a follow of the job that finds it running, with the segment's bound: a test
    // lets its clock pass as a segment that waited so long would.
    std::function<void(int seconds)> on_follow;

  private:
    // A command sent ahead: it goes with the next command and runs on the host after it.
    struct Sent {
        std::string key;   // what a later ask must match
        std::string what;  // its name in the journal
        bool guess = false;
        std::function<std::any(bool midway)> effect;
    };
    // The reply of a command sent ahead that ran: it waits to be asked for.
    struct Reply {
        std::string key;
        std::any value;
        std::exception_ptr error;
        bool guess = false;
    };
    std::vector<Sent> queued_;
    std::deque<Reply> replies_;
    std::vector<Sent> strays_;

    // The client dies: what it sent ahead and what had not run yet may still arrive.
    [[noreturn]] void killed(std::vector<Sent> unrun) {
        for (Sent& sent : unrun) strays_.push_back(std::move(sent));
        queued_.clear();
        throw Killed{};
    }
    void run_strays(const std::string& what) {
        if (strays_.empty() || !strays_before.count(what)) return;
        for (Sent& sent : std::exchange(strays_, {})) {
            calls.push_back(sent.what + " (stray)");
            try {
                sent.effect(false);
            } catch (...) {  // its reply goes nowhere
            }
        }
    }

    // Journals a call; returns how it fails, if it is the one to cut.
    std::optional<Cut> journal_call(const std::string& what) {
        calls.push_back(what);
        if (journal) journal->push_back(name_ + ": " + what);
        if (static_cast<int>(calls.size()) == cut_at) return mode;
        return std::nullopt;
    }
    [[noreturn]] void go_down() {
        up = false;
        replies_.clear();
        throw lost();
    }

    // One remote command: refused while the link is down; the chosen call fails as `mode`
    // says, before or after its effect on the host. What was sent ahead goes with it.
    template <class Effect>
    auto call(const std::string& what, Effect effect) {
        if (!up) throw lost();
        replies_.clear();  // a new command: replies not asked for are dropped
        std::vector<Sent> batch = std::exchange(queued_, {});
        run_strays(what);
        const std::optional<Cut> cut = journal_call(what);
        if (cut == Cut::killed_before) killed({});  // nothing sent, nothing ahead either
        if (cut == Cut::before) go_down();
        auto result = effect(cut == Cut::midway);
        if (cut == Cut::killed_after) killed(std::move(batch));
        if (cut) go_down();
        run_sent_ahead(batch);
        return result;
    }

    // The commands that went with the last one, in the order sent.
    void run_sent_ahead(std::vector<Sent>& batch) {
        for (size_t i = 0; i < batch.size(); ++i) {
            Sent& sent = batch[i];
            const std::optional<Cut> cut = journal_call(sent.what);
            const auto unrun = [&](size_t from) {
                return std::vector<Sent>(batch.begin() + static_cast<std::ptrdiff_t>(from),
                                         batch.end());
            };
            if (cut == Cut::killed_before) killed(unrun(i));
            if (cut == Cut::before) go_down();
            Reply reply{sent.key, {}, nullptr, sent.guess};
            try {
                reply.value = sent.effect(cut == Cut::midway);
            } catch (...) {
                reply.error = std::current_exception();
            }
            if (cut == Cut::killed_after) killed(unrun(i + 1));
            if (cut == Cut::after) go_down();
            if (cut == Cut::midway) {
                up = false;  // the replies before this one arrived
                return;
            }
            replies_.push_back(std::move(reply));
        }
    }

    // The reply of a command sent ahead as `key`, when it is next; a reply before it is
    // dropped (a guess read and dropped; otherwise the shell, with all behind it).
    std::optional<std::any> take_reply(const std::string& key) {
        while (!replies_.empty()) {
            Reply reply = std::move(replies_.front());
            replies_.pop_front();
            if (reply.key == key) {
                if (reply.error) std::rethrow_exception(reply.error);
                return std::move(reply.value);
            }
            if (!reply.guess) replies_.clear();
        }
        return std::nullopt;
    }
    void send_ahead(std::string key, std::string what, bool guess,
                    std::function<std::any(bool)> effect) {
        queued_.push_back({std::move(key), std::move(what), guess, std::move(effect)});
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
            s.moved_to = lock_file ? lock_file->moved_to : "";
            s.state = job_state(s.locked, s.phase, s.pgid, alive, exit_status.has_value());
            return std::vector<JobStatus>{s};
        });
    }

    bool lock(const NewRun& run) override {
        // A start sent ahead goes with the lock of its ticket only.
        if (run.start_ticket.empty()) start_ahead_.reset();
        start_claimed_ = false;
        const auto [acquired, claimed] = call("lock", [&](bool) {
            if (lock_file && lock_file->run_id != run.run_id) return std::pair(false, false);
            if (!lock_file) {  // a new lock; a retry finds its own and completes it
                lock_file = Lock{run.run_id, RunPhase::uploading, {}};
                reset_job_dir(run.run_id);
                attempt = run.attempt;  // a run that continues here after its host was lost
            }
            // tickets.sh: every ticket voided; then "claimed", or this lock's ticket.
            tickets.clear();
            if (start_claimed_file) return std::pair(true, true);
            if (!run.start_ticket.empty()) tickets.insert(run.start_ticket);
            return std::pair(true, false);
        });
        start_claimed_ = claimed;
        return acquired;
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
        take_reply("listings");  // the listings sent ahead with the lock
        return call("upload", [&](bool) {
            ++uploads;
            if (started || start_claimed_file) ++late_uploads;
            files_current = true;
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
        return call("start", [&](bool) { return launch(run_id); });
    }

    void watch(int every_s, OutputSink on_sample) override {
        sample_every = every_s;
        on_sample_ = std::move(on_sample);
    }

    void mark_moved(const std::string& run_id, const std::string& where) override {
        call("mark_moved", [&](bool) {
            if (lock_file && lock_file->run_id == run_id) lock_file->moved_to = where;
            return 0;
        });
    }

    // The fake host's jobs have no guard: nothing to start.
    // The fake host has no HTTP client: the client sends.
    std::string hand_notifications(const std::string& run_id, const std::vector<mlt::NotifyTarget>&,
                                   const std::string&) override {
        return call("hand_notifications", [&](bool) {
            check_mine(run_id);
            return std::string("none: a fake host");
        });
    }

    bool restart_guard(const std::string& run_id,
                       const mlt::JobDir::GuardDeadline* = nullptr) override {
        return call("restart_guard", [&](bool) {
            check_mine(run_id);
            return false;
        });
    }

    void begin_gang_attempt(const std::string& run_id, int next, const std::string&) override {
        call("begin_gang_attempt", [&](bool) {
            check_mine(run_id);
            if (alive) throw Error(ErrorKind::remote, "the job of the attempt before still runs");
            started = start_claimed_file = false;
            exit_status.reset();
            stopped_with.reset();
            attempt = next;
            return 0;
        });
    }

    // As restart_job: only a lost job of the run, at most one launch per attempt.
    long restart(const std::string& run_id, int next, bool failed) override {
        return call("restart", [&](bool) {
            check_run(run_id);
            if (attempt == next) return 4343L;  // a retry: that attempt's job
            const bool collected = lock_file && lock_file->phase == RunPhase::collected;
            const bool restartable = !exit_status || (failed && *exit_status != 0);
            if (!started || alive || !restartable || collected || attempt != next - 1)
                throw Error(ErrorKind::conflict, "cannot restart: the job is not lost");
            exit_status.reset();
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
        if (auto sent = take_reply(follow_key(task, offset, seconds))) {
            const Followed f = std::any_cast<Followed>(*sent);
            if (sink && !f.out.empty()) sink(f.out);
            return f.step;
        }
        const auto effect = follow_effect(task, run_id, offset, seconds);
        return call(task == Task::job ? "follow" : "follow shutdown", [&](bool midway) {
            const Followed f = effect(false);
            if (midway) {
                if (sink && !f.out.empty())
                    sink(std::string_view(f.out).substr(0, f.out.size() / 2));
                return FollowStep{};
            }
            if (sink && !f.out.empty()) sink(f.out);
            return f.step;
        });
    }

    JobResult result() override {
        return call("result", [&](bool) { return job_result(); });
    }

    TransferStats collect(const TrainPlan&, const JobResult& result, Reporter&) override {
        take_reply("collect listing");  // sent ahead on a guess
        return call("collect", [&](bool) {
            ++collects;
            if (!mine(result.run_id)) ++unlocked_collects;
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

    // --- JobPipelining, as ShellJob's commands do it ---
    void prepare() override {}

    void start_ahead_if_current(const std::string& run_id, const std::string& ticket,
                                const std::string&) override {
        start_ahead_ = std::pair(run_id, ticket);
        send_ahead("start if current", "start ahead", false,
                   [this, run_id, ticket](bool midway) -> std::any {
                       return start_if_current(run_id, ticket, midway);
                   });
    }

    void upload_ahead(const std::map<std::string, std::vector<UploadItem>>&) override {
        // Behind a start sent ahead that may start the job, the listings go unasked.
        send_ahead("listings", "listings ahead", start_ahead_.has_value(),
                   [](bool) -> std::any { return 0; });
    }

    std::optional<long> start_sent_ahead() override {
        if (!start_ahead_) return std::nullopt;
        const auto [run_id, ticket] = *std::exchange(start_ahead_, std::nullopt);
        if (auto sent = take_reply("start if current"))
            return std::any_cast<std::optional<long>>(*sent);
        return call("start if current", [&, run_id = run_id, ticket = ticket](bool midway) {
            return start_if_current(run_id, ticket, midway);
        });
    }

    bool start_claimed() const override { return start_claimed_; }

    bool void_start_tickets(const std::string& run_id) override {
        return call("void tickets", [&](bool) {
            check_mine(run_id);
            tickets.clear();
            return start_claimed_file;
        });
    }

    void follow_ahead(Task task, const std::string* run_id, uint64_t offset, int seconds) override {
        auto effect = follow_effect(task, run_id, offset, seconds);
        send_ahead(follow_key(task, offset, seconds), "follow ahead", false,
                   [effect](bool) -> std::any { return effect(false); });
    }

    void collect_ahead_on_guess(const TrainPlan&, const std::string&) override {
        send_ahead("collect listing", "collect listing ahead", true,
                   [](bool) -> std::any { return 0; });
    }

    void release_with_follow(const ReleaseAtEnd& release) override { release_ = release; }

    // retake.sh: only a lock of the run, or one a follow of the run released.
    void retake(const std::string& run_id) override {
        call("retake", [&](bool) {
            if (!mine(run_id) && !released_by(run_id)) throw foreign(run_id);
            retaken = true;
            if (released_by(run_id)) lock_file = *std::exchange(released_lock, std::nullopt);
            return 0;
        });
    }

    int sample_every = 0;  // watch()

  private:
    // What one follow segment saw, its output not yet passed on.
    struct Followed {
        FollowStep step;
        std::string out;
    };
    static std::string follow_key(Task task, uint64_t offset, int seconds) {
        return std::string(task == Task::job ? "follow" : "follow shutdown") + " " +
               std::to_string(offset) + " " + std::to_string(seconds);
    }

    // A follow segment as follow.sh runs it, carrying the release given now.
    std::function<Followed(bool)> follow_effect(Task task, const std::string* run_id_ptr,
                                                uint64_t offset, int seconds) {
        const std::optional<std::string> run_id =
            run_id_ptr ? std::optional<std::string>(*run_id_ptr) : std::nullopt;
        const std::optional<ReleaseAtEnd> carried = release_;
        return [this, task, run_id, offset, seconds, carried](bool) {
            const bool job = task == Task::job;
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
            bool gone = false;
            if (ended && job && run_id) {
                if (mine(*run_id)) {
                    if (lock_file->phase == RunPhase::running)
                        lock_file->phase = RunPhase::finished;
                } else if (released_by(*run_id)) {
                    gone = true;  // another follow of the run released it
                } else {
                    throw foreign(*run_id);
                }
            }
            std::optional<JobResult> end;
            if (ended) {
                end = job_result();
                end->lock_gone = gone;
                if (!job) end->exit_status = shutdown_exit;
            }
            // release_at_end.sh: nothing left to collect, the log dir as listed at home.
            if (ended && job && run_id && carried && exit_status && end->sha256.empty() &&
                !retaken && logs_home && mine(*run_id)) {
                released_lock = std::exchange(lock_file, std::nullopt);
                end->released = true;
                ++follow_releases;
            }
            return Followed{FollowStep{offset + out.size(), ended, end}, out};
        };
    }

    // start_claim.sh, then start.sh (`midway`: the link dropped between the two).
    std::optional<long> start_if_current(const std::string& run_id, const std::string& ticket,
                                         bool midway) {
        check_mine(run_id);
        if (!started && !start_claimed_file) {
            const bool had = tickets.erase(ticket) > 0;
            if (!files_current || !had) return std::nullopt;  // "changed"
            start_claimed_file = true;
        }
        if (midway) return std::nullopt;
        return launch(run_id);
    }

    // start.sh: at most one launch per run (the marker).
    long launch(const std::string& run_id) {
        check_run(run_id);
        if (!started) {
            started = alive = true;
            ++launches;
            if (attempt > 1)
                console_log += "==== mlt: attempt " + std::to_string(attempt) + " of run " +
                               run_id +
                               " (continued on this host: the previous one was lost) ====\n";
            if (lock_file) lock_file->phase = RunPhase::running;
        }
        return 4242L;
    }

    bool mine(const std::string& run_id) const { return lock_file && lock_file->run_id == run_id; }
    bool released_by(const std::string& run_id) const {
        return !lock_file && released_lock && released_lock->run_id == run_id &&
               job_run_id == run_id;
    }
    void check_mine(const std::string& run_id) const {
        if (!mine(run_id) || job_run_id != run_id) throw foreign(run_id);
    }

    JobResult job_result() const {
        JobResult r;
        r.run_id = job_run_id;
        r.exit_status = exit_status;
        if (exit_status == 0 && script.records_archive) r.sha256 = "sha-of-" + job_run_id;
        r.training_started = started;
        r.stopped_with = stopped_with;
        if (stopped_with && !script.guard_stop.empty()) r.guard_stop = script.guard_stop;
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
        if (!script.guard_stop.empty()) exit_status = stopped_with = 143;
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
        released_lock.reset();
        retaken = start_claimed_file = false;
        tickets.clear();
    }

    void check_run(const std::string& run_id) const {
        if (job_run_id != run_id) throw foreign(run_id);
    }

    Error foreign(const std::string& run_id) const {
        return foreign_run(name_, "m", run_id, "the job dir is run '" + job_run_id + "'s");
    }

    std::string name_;
    // The client's side, as ShellJob keeps it.
    std::optional<std::pair<std::string, std::string>> start_ahead_;  // run id, ticket
    bool start_claimed_ = false;
    std::optional<ReleaseAtEnd> release_;
    OutputSink on_sample_;
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
        host_.reconnected();
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
