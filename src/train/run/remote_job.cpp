// ShellJob: the job protocol of mlt/job/job.h for one (remote dir, model), on whatever link
// the Connection has open now (a reconnect replaces it).
#include "mlt/train/run/remote_job.h"

#include <utility>

#include "mlt/transfer/ranges.h"

namespace mlt {

ShellJob::ShellJob(Connection& connection, std::string remote_dir, std::string model,
                   const std::string& compression, int transfer_connections)
    : connection_(connection),
      remote_dir_(std::move(remote_dir)),
      model_(std::move(model)),
      compression_([this]() -> Remote& { return remote(); }, compression),
      transfer_connections_(transfer_connections) {}

std::vector<JobStatus> ShellJob::status() {
    return JobDir(remote(), remote_dir_, model_).query_jobs();
}

bool ShellJob::lock(const NewRun& run) {
    // A start sent ahead goes with the lock of its ticket only (a lock without one, after a
    // first try, must not ask for that try's).
    if (run.start_ticket.empty()) start_ahead_.reset();
    start_claimed_ = false;
    return JobDir(remote(), remote_dir_, model_).acquire_run(run, &start_claimed_);
}

void ShellJob::set_phase(const std::string& run_id, RunPhase phase) {
    JobDir(remote(), remote_dir_, model_).set_run_phase(run_id, phase);
}

void ShellJob::release(const std::string& run_id) {
    JobDir(remote(), remote_dir_, model_).release_run(run_id);
}

void ShellJob::discard() {
    JobDir(remote(), remote_dir_, model_).discard_job();
}

void ShellJob::clean(const std::string& archive, const std::string& log_dir) {
    JobDir(remote(), remote_dir_, model_).clean_outputs(archive, log_dir);
}

SyncResult ShellJob::upload(const std::map<std::string, std::vector<UploadItem>>& uploads) {
    // The check sent ahead answered first (before the listings): read now, also when nothing
    // is to be sent (the collection asks it then).
    if (compression_ahead_) compression_.choice()();
    compression_ahead_ = false;
    const SyncResult sent = sync_up(remote(), uploads, compression_.choice(), &upload_links());
    close_idle_links();
    return sent;
}

ConnectionLinks& ShellJob::upload_links() {
    if (!upload_links_)
        upload_links_ = std::make_unique<ConnectionLinks>(connection_, transfer_connections_);
    return *upload_links_;
}

void ShellJob::close_idle_links() {
    // Not while one still connects (a link opened ahead that the upload did not need):
    // waiting for it would hold the run up; a later phase closes it.
    if (upload_links_ && !upload_links_->connecting()) upload_links_.reset();
}

// The compression's check (once per run: the upload or the collection asks it) and the
// listings go with the lock's command: no round trip of their own.
void ShellJob::upload_ahead(const std::map<std::string, std::vector<UploadItem>>& uploads) {
    compression_ahead_ = compression_.send_ahead();
    // Behind a start sent ahead that may start the job, the listings may go unasked.
    sync_up_ahead(remote(), uploads, &upload_links(), start_ahead_.has_value());
}

long ShellJob::start(const std::string& run_id) {
    return JobDir(remote(), remote_dir_, model_).start_job(run_id);
}

void ShellJob::start_ahead_if_current(const std::string& run_id, const std::string& ticket,
                                      const std::string& current_test) {
    start_ahead_ = {run_id, ticket, current_test};
    JobDir(remote(), remote_dir_, model_).start_job_ahead_if_current(run_id, ticket, current_test);
}

std::optional<long> ShellJob::start_sent_ahead() {
    if (!start_ahead_) return std::nullopt;
    const auto [run_id, ticket, test] = *std::exchange(start_ahead_, std::nullopt);
    const auto pgid =
        JobDir(remote(), remote_dir_, model_).start_job_if_current(run_id, ticket, test);
    // The compression's check came next: read now, as upload() would (the listings after it
    // are guesses, dropped unread when the job started).
    if (pgid && std::exchange(compression_ahead_, false)) compression_.choice()();
    return pgid;
}

bool ShellJob::void_start_tickets(const std::string& run_id) {
    return JobDir(remote(), remote_dir_, model_).void_start_tickets(run_id);
}

void ShellJob::follow_ahead(Task task, const std::string* run_id, uint64_t offset, int seconds) {
    const bool job = task == Task::job;
    JobDir(remote(), remote_dir_, model_)
        .follow_log_ahead(task, run_id, offset, seconds, job ? sample_every_ : 0,
                          job && release_ ? &*release_ : nullptr);
}

void ShellJob::release_with_follow(const ReleaseAtEnd& release) {
    release_ = release;
}

void ShellJob::mark_moved(const std::string& run_id, const std::string& where) {
    JobDir(remote(), remote_dir_, model_).mark_run_moved(run_id, where);
}

void ShellJob::begin_gang_attempt(const std::string& run_id, int attempt,
                                  const std::string& wrapper) {
    JobDir(remote(), remote_dir_, model_).begin_gang_attempt(run_id, attempt, wrapper);
}

std::string ShellJob::hand_notifications(const std::string& run_id,
                                         const std::vector<NotifyTarget>& targets,
                                         const std::string& info) {
    return JobDir(remote(), remote_dir_, model_).hand_notifications(run_id, targets, info);
}

bool ShellJob::restart_guard(const std::string& run_id, const JobDir::GuardDeadline* deadline) {
    return JobDir(remote(), remote_dir_, model_).start_guard(run_id, deadline);
}

void ShellJob::retake(const std::string& run_id) {
    JobDir(remote(), remote_dir_, model_).retake_run(run_id);
}

void ShellJob::collect_ahead_on_guess(const TrainPlan& plan, const std::string& run_id) {
    JobResult guessed;
    guessed.run_id = run_id;
    collect_results_ahead(remote(), plan, guessed, true);
}

void ShellJob::watch(int every_s, OutputSink on_sample) {
    sample_every_ = every_s;
    on_sample_ = std::move(on_sample);
}

long ShellJob::restart(const std::string& run_id, int attempt, bool failed) {
    return JobDir(remote(), remote_dir_, model_).restart_job(run_id, attempt, failed);
}

bool ShellJob::stop(int grace_s, const std::string* run_id) {
    return JobDir(remote(), remote_dir_, model_).stop_job(grace_s, run_id);
}

FollowStep ShellJob::follow(Task task, const std::string* run_id, uint64_t offset, int seconds,
                            const OutputSink& sink) {
    close_idle_links();
    const bool job = task == Task::job;
    return JobDir(remote(), remote_dir_, model_)
        .follow_log(task, run_id, offset, seconds, sink, job ? sample_every_ : 0,
                    job ? &on_sample_ : nullptr, job && release_ ? &*release_ : nullptr);
}

JobResult ShellJob::result() {
    return JobDir(remote(), remote_dir_, model_).read_job_result();
}

TransferStats ShellJob::collect(const TrainPlan& plan, const JobResult& result,
                                Reporter& reporter) {
    ConnectionLinks links(connection_, plan.transfer_connections);
    return collect_results(remote(), plan, result, compression_.choice(), reporter, &links);
}

bool ShellJob::start_shutdown(const std::string& run_id, const std::string& script,
                              bool record_collected) {
    return JobDir(remote(), remote_dir_, model_).start_shutdown(run_id, script, record_collected);
}

std::optional<int> ShellJob::shutdown_status() {
    return JobDir(remote(), remote_dir_, model_).read_shutdown_status();
}

}  // namespace mlt
