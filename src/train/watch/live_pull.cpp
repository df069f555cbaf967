// LivePull: the pulls of --sync-every, in a thread of their own over a side link.
#include "mlt/train/watch/live_pull.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>

#include "mlt/job/job.h"
#include "mlt/transfer/progress.h"
#include "mlt/transfer/ranges.h"
#include "mlt/util/interrupt.h"

namespace mlt {

namespace {

std::string files_and_bytes(const TransferStats& moved) {
    return std::to_string(moved.files) + (moved.files == 1 ? " file, " : " files, ") +
           format_bytes(moved.bytes);
}

std::string clock_now() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    ::localtime_r(&now, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
    return buf;
}

double seconds_now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

Error stopped() {
    return Error(ErrorKind::interrupted, "the live pull was stopped");
}

}  // namespace

std::string synced_text(const std::string& clock, const TransferStats& moved) {
    return "synced " + clock + ": " + (moved.files == 0 ? "nothing new" : files_and_bytes(moved));
}

std::optional<TransferStats> SyncNotices::add(double now, const TransferStats& moved) {
    pending_.files += moved.files;
    pending_.bytes += moved.bytes;
    if (pending_.files == 0) return std::nullopt;
    if (last_ && now - *last_ < kInterval) return std::nullopt;
    last_ = now;
    return std::exchange(pending_, TransferStats{});
}

void StoppableRemote::check() const {
    if (stop_.load()) throw stopped();
}

InputSource StoppableRemote::guarded(const InputSource& input) const {
    if (!input) return input;
    return [this, input](char* buffer, size_t capacity) {
        check();
        return input(buffer, capacity);
    };
}

OutputSink StoppableRemote::guarded(const OutputSink& sink) const {
    return [this, sink](std::string_view data) {
        check();
        if (sink) sink(data);
    };
}

RemoteOutput StoppableRemote::run(const std::string& command, std::string_view input) {
    check();
    return inner_.run(command, input);
}

int StoppableRemote::stream(const std::string& command, const InputSource& input,
                            const OutputSink& on_stdout, const OutputSink& on_stderr) {
    check();
    return inner_.stream(command, guarded(input), guarded(on_stdout), guarded(on_stderr));
}

std::vector<int> StoppableRemote::stream_parallel(const std::vector<StreamJob>& jobs) {
    check();
    std::vector<StreamJob> mine;
    for (const auto& job : jobs)
        mine.push_back({job.command, guarded(job.input), guarded(job.on_stdout),
                        guarded(job.on_stderr), job.on_taken, job.data_stream});
    return inner_.stream_parallel(mine);
}

LivePull::LivePull(TrainPlan plan, std::string run_id, StatusLine& status, Reporter& reporter)
    : plan_(std::move(plan)), run_id_(std::move(run_id)), status_(status), reporter_(reporter) {}

LivePull::~LivePull() {
    stop();
}

bool LivePull::start(Connection& connection) {
    if (running()) return true;
    side_ = connection.open_side();
    if (!side_) return false;
    stop_ = false;
    log_dir_.clear();  // another host's may differ
    // The run's thread takes the signals (its waits end early on them).
    thread_ = thread_without_signals([this, side = side_.get()] { loop(*side); });
    spdlog::debug("pulling the logs of {} every {} s while it trains, on a second connection",
                  plan_.model, plan_.sync_every_s);
    return true;
}

void LivePull::request_stop() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
}

void LivePull::stop() {
    if (!running()) return;
    request_stop();
    thread_.join();
    side_.reset();
}

void LivePull::loop(Connection& side) {
    const StopScope scope(stop_);  // every remote wait of this thread ends on stop()
    bool reopen = false;           // the last pull failed: its link is not to be trusted
    // The remote's compressor, asked once, at the first pull that streams small files.
    const CompressionChoice compression =
        checked_compression([&side]() -> Remote& { return side.remote(); }, plan_.compression);
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            if (wake_.wait_for(lock, std::chrono::seconds(plan_.sync_every_s),
                               [this] { return stop_.load(); }))
                return;
        }
        try {
            report(pull_once(side, compression, reopen));
        } catch (const Error& e) {
            reopen = true;
            if (stop_.load()) return;
            if (e.kind() == ErrorKind::tampered) {
                note_tampered(e);
                ++pulls_;
                continue;
            }
            // A lost link is the run's to report (its own connection goes the same way); a
            // signal is the run's to handle.
            if (is_link_loss(e) || is_signal(e.kind()) || warned_)
                spdlog::debug("pulling the logs of {} while training: {}", plan_.model, e.what());
            else
                reporter_.warning("a pull of the logs of " + plan_.model +
                                  " while training failed: " + e.what() + "; trying again every " +
                                  std::to_string(plan_.sync_every_s) +
                                  " s (the final collection still brings everything)");
            warned_ = warned_ || !(is_link_loss(e) || is_signal(e.kind()));
        }
        ++pulls_;
    }
}

std::optional<Error> LivePull::tampered() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return tampered_;
}

void LivePull::note_tampered(const Error& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (tampered_) return;
    tampered_ = e;
    reporter_.warning("a pull of the logs of " + plan_.model + " while training was refused: " +
                      e.what() + "; nothing of it was written, and the run will end as failed");
}

TransferStats LivePull::pull_once(Connection& side, const CompressionChoice& compression,
                                  bool& reopen) {
    if (reopen) side.reconnect();
    reopen = false;
    StoppableRemote remote(side.remote(), stop_);
    std::string recorded;
    if (plan_.remote_log_dir.empty()) {
        if (log_dir_.empty()) {
            // What the job recorded, once it did: until then there is nothing to pull.
            const JobResult job = JobDir(remote, plan_.remote_dir, plan_.model).read_job_result();
            if (job.run_id == run_id_) log_dir_ = job.log_dir;
            if (log_dir_.empty()) return {};
        }
        recorded = log_dir_;
    }
    ConnectionLinks links(side, plan_.transfer_connections);
    const LogsPull pulled =
        pull_logs(remote, plan_, recorded, compression, PullReport::quiet, &links);
    TransferStats moved = pulled.cli_log;
    moved.files += pulled.logs.moved.files;
    moved.bytes += pulled.logs.moved.bytes;
    return moved;
}

void LivePull::report(const TransferStats& moved) {
    const std::string clock = clock_now();
    status_.set(kSyncPart, synced_text(clock, moved));
    spdlog::debug("{} of {} into {}", synced_text(clock, moved), plan_.model, plan_.local_logs);
    if (stderr_is_terminal()) return;  // the status line shows it
    if (auto told = notices_.add(seconds_now(), moved))
        // An alert, not a notice: on stderr, as the status line it stands in for.
        reporter_.alert("synced " + clock + " while training: " + files_and_bytes(*told) + " in " +
                        plan_.local_logs);
}

}  // namespace mlt
