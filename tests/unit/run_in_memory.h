#pragma once
// What the run engine's in-memory tests share: a clock that moves only when the run sleeps,
// and the plan of a model "m" whose local files live under one temp dir.
#include <string>

#include "mlt/train/run/train_run.h"

namespace mlt::test {

// Simulated time: sleep() returns at once, having moved the clock on.
class ManualClock : public RunClock {
  public:
    double now() override { return now_; }
    void sleep(double seconds) override { now_ += seconds; }

  private:
    double now_ = 1000;
};

// Model "m" in /remote, its local files under `local`, shutdown_cmds [poweroff].
inline TrainPlan memory_plan(const std::string& local) {
    TrainPlan p;
    p.model = "m";
    p.remote_dir = "/remote";
    p.archive = "m.mltk.zip";
    p.spec_dir = local + "/project";
    p.local_logs = local + "/logs";
    p.local_console = local + "/logs/console.log";
    p.local_archive = local + "/project/m.mltk.zip";
    p.local_state_dir = local + "/state";
    p.wrapper.model = "m";
    p.wrapper.train_cmd = "train";
    p.shutdown_cmds = {"poweroff"};
    p.compression = "none";
    p.owner = "tester";
    p.resume_line = "mlt ssh -h fake train m --resume";
    p.stop_line = "mlt ssh -h fake stop m";
    return p;
}

}  // namespace mlt::test
