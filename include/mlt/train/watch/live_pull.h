#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "mlt/ssh/connection.h"
#include "mlt/train/run/remote_job.h"
#include "mlt/train/run/status_line.h"
#include "mlt/train/run/train_plan.h"

namespace mlt {

// The status line's part for the pulls of --sync-every ("2-sync").
constexpr char kSyncPart[] = "2-sync";

// "synced 12:03:04: 2 files, 35.0 MiB" or "synced 12:03:04: nothing new": the status line's
// part after a pull that ended at `clock` (local time, HH:MM:SS) and moved `moved`.
std::string synced_text(const std::string& clock, const TransferStats& moved);

// Where stderr is no terminal (no status line), what the pulls brought is told as a log line,
// at most one per kInterval seconds, so that a pull every second is not a line every second:
// what the pulls in between brought is added up into the next line.
class SyncNotices {
  public:
    static constexpr double kInterval = 60;
    // Counts a pull that ended at `now` (seconds, any monotonic clock) having moved `moved`;
    // returns the totals to tell now (the sum since the last line told), or nullopt when
    // nothing is to be told yet (nothing new, or the last line was less than kInterval ago).
    std::optional<TransferStats> add(double now, const TransferStats& moved);

  private:
    TransferStats pending_;
    std::optional<double> last_;  // when the last line was told
};

// A Remote that passes everything on to another one and throws mlt::Error (interrupted)
// from inside the streams (in their input and output callbacks) once `stop` is set: a pull
// of a big file ends within one chunk. Also before each command.
class StoppableRemote : public Remote {
  public:
    StoppableRemote(Remote& inner, const std::atomic<bool>& stop) : inner_(inner), stop_(stop) {}
    const std::string& name() const override { return inner_.name(); }
    RemoteOutput run(const std::string& command, std::string_view input = {}) override;
    int stream(const std::string& command, const InputSource& input, const OutputSink& on_stdout,
               const OutputSink& on_stderr) override;
    std::vector<int> stream_parallel(const std::vector<StreamJob>& jobs) override;
    double round_trip_s() const override { return inner_.round_trip_s(); }
    double login_cost_s() const override { return inner_.login_cost_s(); }
    double channel_cost_s() const override { return inner_.channel_cost_s(); }
    bool listen_for_channels() override { return inner_.listen_for_channels(); }
    void run_ahead(const std::string& command, std::string input) override {
        inner_.run_ahead(command, std::move(input));
    }
    void run_ahead_on_guess(const std::string& command, std::string input) override {
        inner_.run_ahead_on_guess(command, std::move(input));
    }

  private:
    void check() const;
    InputSource guarded(const InputSource& input) const;
    OutputSink guarded(const OutputSink& sink) const;

    Remote& inner_;
    const std::atomic<bool>& stop_;
};

// --sync-every: while the job runs, the remote log dir comes into the local one every
// `every_s` seconds (counted from the end of the previous pull), in a thread of its own over
// a second connection to the host (Connection::open_side), so that a pull never delays the
// log follow on the run's connection. Each pull is pull_logs(), as the final collection
// does it: only new or changed files, only whole versions. After each pull the status line
// part kSyncPart says when it ended and what it brought; where stderr is no terminal,
// SyncNotices decides on a log line; -v logs each pull at debug. A lost link is reopened at
// the next pull; a failed pull is tried again then (the first failure of another kind is one
// warning). A pull that finds tampering is one warning, and tampered() keeps it for the run to
// fail with at its end. The run's flow never waits on it, except in stop().
class LivePull {
  public:
    // What a pull needs of the run: `plan` (the remote dir and log dir, the local logs),
    // `run_id` (a recorded log dir of another run is not pulled). `status` and `reporter`
    // (the run's: its warnings go there, with a node's prefix) must outlive this object.
    LivePull(TrainPlan plan, std::string run_id, StatusLine& status, Reporter& reporter);
    ~LivePull();  // stop()
    LivePull(const LivePull&) = delete;
    LivePull& operator=(const LivePull&) = delete;

    // Starts the pulls over a side link of `connection` (which must outlive the pulls, until
    // stop()); false when it offers none (then nothing happens). Again after stop(): a new
    // side link (e.g. of another host). Does nothing while running.
    bool start(Connection& connection);
    // Ends the pulls: a pull under way is cut off (its big files continue inside themselves
    // at the next pull, or at the final collection, which must wait for this), the thread is
    // joined and the side link dropped. Does nothing when not running.
    void stop();
    // Asks the pulls to end without waiting for them: nothing more is pulled or shown, and
    // the thread ends once a connect under way returns (stop() or destruction joins it).
    void request_stop();
    bool running() const { return thread_.joinable(); }
    // Pulls that ended (with or without error) since construction.
    int pulls() const { return pulls_.load(); }
    // The first pull that found the host's listing or stream tampered with (nothing of it
    // was written): the run must not end as a success.
    std::optional<Error> tampered() const;

  private:
    void loop(Connection& side);
    // One pull; returns what moved.
    TransferStats pull_once(Connection& side, const CompressionChoice& compression, bool& reopen);
    void report(const TransferStats& moved);
    void note_tampered(const Error& e);

    const TrainPlan plan_;
    const std::string run_id_;
    StatusLine& status_;
    Reporter& reporter_;
    std::unique_ptr<Connection> side_;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::atomic<int> pulls_{0};
    mutable std::mutex mutex_;  // with wake_: cuts the wait between two pulls short on stop()
    std::condition_variable wake_;
    std::string log_dir_;            // the remote log dir, once known (the thread's own)
    std::optional<Error> tampered_;  // under mutex_
    SyncNotices notices_;            // the thread's own
    bool warned_ = false;            // the thread's own: a failed pull was reported
};

}  // namespace mlt
