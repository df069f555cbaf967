#pragma once
// Watching the host while the job trains (docs/usage.md, "Watching a run"): the samples the
// log follow brings (its script prints one line per watch.every seconds on stderr: GPU use and
// memory from nvidia-smi when the host has it, load, free disk), their record in the local
// log dir, the status line's part, the summary's mean and peak (the idle-GPU rule is the
// host's guard's: guard.sh).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlt {

// The file of samples in the local log dir, one JSON object per line (mlt's own there: a
// remote file of that name is stored aside).
constexpr char kMetricsFile[] = "mlt-metrics.jsonl";

// A GPU is idle below this utilization (percent).
constexpr int kIdleGpuPercent = 10;

struct GpuUse {
    int util = 0;  // percent
    long long mem_used_mib = 0;
    long long mem_total_mib = 0;
};

// One sample of the remote host.
struct HostSample {
    long long time = 0;        // the remote clock, epoch seconds
    std::vector<GpuUse> gpus;  // empty: no nvidia-smi (or it failed)
    std::optional<double> load1;
    std::optional<long long> free_kib;  // of the remote dir's file system
};

// The line's sample: "mlt-sample TIME [gpu=U,USED,TOTAL;...] load=L free=KIB" (as the follow
// script prints it); nullopt for anything else.
std::optional<HostSample> parse_sample(std::string_view line);

// The sample as one JSON line (no newline) of the metrics file.
std::string sample_json(const HostSample& sample, const std::string& run_id);
// Such a line read back (and its run id into `run_id`); nullopt when it is none.
std::optional<HostSample> parse_sample_json(std::string_view line, std::string* run_id);

// The status line's part: "GPU 80% 12.0/80.0 GiB" (each GPU, comma-separated); "" without GPUs.
std::string gpu_status(const HostSample& sample);

// The samples of one run: the mean and peak GPU use.
class GpuWatch {
  public:
    void add(const HostSample& sample);
    // "mean 45 %, peak 98 % over 12 samples"; "" when no sample had a GPU.
    std::string summary() const;

  private:
    int gpu_samples_ = 0;
    double util_sum_ = 0;  // of each sample's mean over its GPUs
    int peak_ = 0;
};

}  // namespace mlt
