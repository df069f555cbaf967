// Watching the job while it is followed (docs/usage.md, "Watching a run"): the host's
// samples (GPU use, load, free disk), shown and recorded (the rules are the host's guard's).
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "mlt/train/run/train_run.h"
#include "mlt/transfer/progress.h"
#include "mlt/util/text.h"

namespace mlt {

void TrainRun::arm_watch() {
    job_->watch(plan_.watch_every_s, [this](std::string_view line) { on_sample(line); });
}

void TrainRun::on_sample(std::string_view line) {
    const auto sample = parse_sample(line);
    // A follow that relays the guard's samples may relay the last one again at its start.
    if (!sample || sample->time <= watchers_.last_sample) return;
    watchers_.last_sample = sample->time;
    watchers_.gpu.add(*sample);
    if (!sample->gpus.empty()) terminal_.status.set("2-gpu", gpu_status(*sample));
    // The record: appended, never through a symlink (a failure is said once at debug level:
    // the run goes on without it).
    std::error_code ec;
    std::filesystem::create_directories(plan_.local_logs, ec);
    const std::string path = plan_.local_logs + "/" + kMetricsFile;
    const int fd =
        ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    const std::string text = sample_json(*sample, run_id_) + "\n";
    if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
        spdlog::debug("cannot append to {}: {}", path, std::strerror(errno));
    if (fd >= 0) ::close(fd);
}

}  // namespace mlt
