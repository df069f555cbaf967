// The follow of a task's log (docs/remote-protocol.md, "Log streaming"): bounded segments that
// send the log from an offset, with the task's result at its end (follow.sh), and plain reads
// of the log.
#include "job_shell.h"
#include "mlt/job/job.h"
#include "mlt/transfer/transfer.h"
#include "mlt/util/bounded.h"

namespace mlt {

using namespace job_detail;

namespace {

// The line before the result a follow prints on stderr at the task's end (follow.sh).
constexpr std::string_view kResultMarker = "mlt-follow-result\n";

// The result after the last kResultMarker line in a follow's stderr (which keeps what came
// before it); none when there is no such line.
std::optional<JobResult> take_follow_result(std::string& err) {
    const std::string marker(kResultMarker);
    size_t at = err.rfind("\n" + marker);
    if (at != std::string::npos)
        ++at;
    else if (err.compare(0, marker.size(), marker) == 0)
        at = 0;
    else
        return std::nullopt;
    JobResult result = parse_job_result(std::string_view(err).substr(at + marker.size()));
    err.resize(at);
    return result;
}

// A BoundedTail for a follow's stderr: each sample line goes to `on_sample` (if any) and is
// not kept, so that what is kept is the follow's own words and result.
BoundedTail follow_stderr(const OutputSink* on_sample) {
    return BoundedTail(kKeptStderr, [on_sample](std::string_view line) {
        static constexpr std::string_view kSample = "mlt-sample ";
        if (line.substr(0, kSample.size()) != kSample) return false;
        if (on_sample && *on_sample) (*on_sample)(line);
        return true;
    });
}

// follow_log's command: follow.sh with what the segment needs, waiting on a job's wrapper
// (nap_on_job.sh); at the end its result (follow_end.sh and result.sh for a job) and, with
// `release`, the release of the run's lock (release_at_end.sh). Each piece only where it is
// needed: the follow is the command sent most often.
std::string follow_command(const std::string& remote_dir, const std::string& model, Task task,
                           const std::string* run_id, uint64_t offset, int seconds,
                           int sample_every, const ReleaseAtEnd* release) {
    const JobPaths p(model);
    const TaskFiles f = task_files(p, task);
    const bool job = task == Task::job;
    ShellCommand c = run_command(remote_dir, model, run_id ? *run_id : std::string());
    c.add(scripts::job_alive);
    if (sample_every > 0)
        c.set("mlt_samples", job ? p.dir + "/samples" : "")
            .set("mlt_seen", "")
            .add(scripts::job_sampler);
    if (job && run_id) c.add(scripts::job_released);  // for follow_end.sh
    if (job)
        c.set("mlt_lockf", p.running).add(scripts::job_nap_on_job);
    else
        c.add(scripts::job_nap);
    c.set("l", f.log)
        .set("s", f.status)
        .set("mlt_pidf", f.pid)
        .number("o", static_cast<long long>(offset))
        .number("mlt_seconds", seconds)
        // From the start of the log, quick looks first: a short task's end is seen sooner.
        .number("q", offset == 0 ? 40 : 0)
        .flag("mlt_scoped", run_id != nullptr)
        .set("mlt_every", sample_every > 0 ? std::to_string(sample_every) : "")
        .number("mlt_st_not_started", kNotStartedStatus)
        .number("mlt_st_segment_over", kSegmentOverStatus)
        .add(scripts::job_follow);
    if (!job) return c.add(scripts::job_follow_end_shutdown).text();
    c.add(scripts::job_follow_end).add(scripts::job_result);
    if (release && run_id)
        c.set("mlt_release_dir", release->log_dir)
            .set("mlt_release_sha", release->listing_sha256)
            .set("mlt_release_digest", remote_tree_digest(release->log_dir))
            .add(scripts::job_release_at_end);
    return c.text();
}

// The command of read_log.
std::string read_log_command(const std::string& remote_dir, const std::string& model, Task task,
                             uint64_t offset) {
    ShellCommand c = remote_dir_command(remote_dir);
    c.set("l", task_files(JobPaths(model), task).log)
        .number("o", static_cast<long long>(offset))
        .add(scripts::job_read_log);
    return c.text();
}

}  // namespace

void JobDir::follow_log_ahead(Task task, const std::string* run_id, uint64_t offset, int seconds,
                              int sample_every, const ReleaseAtEnd* release) {
    remote().run_ahead(
        follow_command(remote_dir_, model_, task, run_id, offset, seconds, sample_every, release),
        {});
}

FollowStep JobDir::follow_log(Task task, const std::string* run_id, uint64_t offset, int seconds,
                              const OutputSink& sink, int sample_every, const OutputSink* on_sample,
                              const ReleaseAtEnd* release) {
    FollowStep step;
    step.offset = offset;
    BoundedTail said = follow_stderr(on_sample);
    const std::string rid = run_id ? *run_id : std::string();
    int status = remote().stream(
        follow_command(remote_dir_, model_, task, run_id, offset, seconds, sample_every, release),
        {},
        [&](std::string_view d) {
            step.offset += d.size();
            sink(d);
        },
        said.sink());
    std::string err = said.str();
    if (status == kForeignRunStatus) throw foreign_run(remote(), model_, rid, err);
    if (status == kDirGoneStatus) throw remote_dir_gone(remote().name(), remote_dir_, model_, rid);
    if (status == kSegmentOverStatus) return step;
    if (status != 0) throw remote_failure(remote(), "reading the console log", status, err);
    step.ended = true;
    step.result = take_follow_result(err);
    return step;
}

FollowStep JobDir::follow_to_end(Task task, const std::string* run_id, uint64_t& offset,
                                 int seconds, const OutputSink& sink) {
    for (;;) {
        FollowStep step = follow_log(task, run_id, offset, seconds, sink);
        offset = step.offset;
        if (step.ended) return step;
    }
}

void JobDir::read_log_ahead_on_guess(Task task, uint64_t offset) {
    remote().run_ahead_on_guess(read_log_command(remote_dir_, model_, task, offset), {});
}

uint64_t JobDir::read_log(Task task, uint64_t offset, const OutputSink& sink) {
    BoundedTail err;
    uint64_t received = 0;
    int status = remote().stream(
        read_log_command(remote_dir_, model_, task, offset), {},
        [&](std::string_view d) {
            received += d.size();
            sink(d);
        },
        err.sink());
    if (status != 0) throw remote_failure(remote(), "reading the console log", status, err.str());
    return offset + received;
}

}  // namespace mlt
