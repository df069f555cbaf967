// Watching the job while it is followed (docs/usage.md, "Watching a run"): the
// watch.stop_when rules over its console log, and the host's samples (GPU use, load, free
// disk), shown and recorded (the idle-GPU rule is the host's guard's).
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

void RunWatchers::prime(const std::string& local_console, uint64_t offset) {
    primed = Primed::yes;
    if (!rules.learns() || offset == 0) return;  // regex rules need no earlier lines
    // What this machine followed before (a --resume, a new mlt after a kill): each line was
    // looked at then; plateau rules take their best value and count from it.
    std::ifstream in(local_console, std::ios::binary);
    std::string chunk(1 << 20, '\0');
    for (uint64_t left = offset; left > 0 && in;) {
        in.read(chunk.data(), static_cast<std::streamsize>(std::min<uint64_t>(left, chunk.size())));
        const auto got = static_cast<uint64_t>(in.gcount());
        if (got == 0) break;
        rules.prime(std::string_view(chunk.data(), got));
        left -= got;
    }
}

bool TrainRun::stop_by_rule(const RuleHit& hit) {
    if (!may_stop_job()) return false;
    stop_job_for(Ending::ruled, "watch.stop_when rule " + hit.rule + " (line: '" +
                                    printable(hit.line, 200) + "')");
    return true;
}

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
