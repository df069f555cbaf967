#pragma once
// The fixture of the hostile-host tests (issue 37): TrainTest against a HostileHost, with
// the checks every attack test makes (hostile_host.h says how to write one).

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/hostile_host.h"
#include "harness/laptop_snapshot.h"
#include "harness/time_factor.h"
#include "harness/train_fixture.h"

namespace mlt_test {

// How long an attacked mlt may take to end (non-zero is fine): the attacks here stall, flood
// or drip for as long as mlt lets them; a fixed mlt ends each within seconds.
inline const std::chrono::seconds kHostileWait = scaled(std::chrono::seconds{60});
// How long an attacked mlt may take to end after a SIGTERM (a signal is acted on within a
// second whatever is being read; the rest is slack for a loaded machine).
inline const std::chrono::seconds kSignalWait = scaled(std::chrono::seconds{10});

// The bound on the peak RSS of one mlt under attack, in KiB (the comment in the .cpp file
// says how it was chosen).
std::int64_t peak_rss_bound_kib();
// What a sanitizer build adds to any peak RSS bound, in KiB: AddressSanitizer keeps up to
// 256 MiB of freed memory resident (its quarantine), ThreadSanitizer's shadow memory is a few
// times mlt's own; 0 in a normal build.
std::int64_t sanitizer_headroom_kib();
// Success when the run's own peak RSS (wait4) is known and within peak_rss_bound_kib().
::testing::AssertionResult memory_bounded(const ProcessResult& r);
// The bound on the debug logs (mlt.log and its rotations) in bytes: 3 files of 8 MiB and
// 1 MiB of slack.
std::uint64_t cli_logs_bound();
// A short account of a run for assertion messages: exit status, timeout, peak RSS, the
// sizes of its output and their last 2 KiB (a flood must not land in the test log whole).
std::string brief(const ProcessResult& r);

class HostileTrainTest : public TrainTest {
  protected:
    std::string sshd_extra_config() const override { return host_.sshd_config(); }
    void TearDown() override;

    const HostileHost& host() const { return host_; }

    // The laptop side now: every entry under HOME and the project, except the local dirs
    // of `models` (~/.mltk/models/<model>, the archive beside the spec and its partial
    // files), mlt's own state (~/.mltk/ssh, ~/.mltk/cli_logs) and `targets` (download_files
    // targets asked for: absolute, or relative to the project; a dir covers its tree).
    LaptopSnapshot snapshot(const std::vector<std::string>& models,
                            const std::vector<std::string>& targets = {}) const;
    // What every attack test checks after its run: the run ended within its wait, nothing
    // changed on the laptop outside what `before` allows, its peak RSS is within the bound,
    // and the debug logs within theirs.
    void expect_contained(const ProcessResult& r, const LaptopSnapshot& before) const;

    // The bytes of ~/.mltk/cli_logs/mlt.log* together.
    std::uint64_t cli_logs_bytes() const;
    // Writes ~/.bashrc (and returns its content): what an attack must not touch.
    std::string plant_bashrc() const;

    // A shell model `stem` ("sh {spec}") whose remote log dir is `log_dir` (a settings value:
    // "{model}" is the model's name), with `extra` settings lines (indented by two) in its
    // sidecar; the user settings are written too.
    void shell_model(const std::string& stem, const std::string& script, const std::string& log_dir,
                     const std::string& extra = {}) const;
    // A remote log dir `levels` levels below remote_logs_root() ("<root>/l1/.../{model}"),
    // as a settings value, and the one of `model`: a record that climbs `levels` times
    // ("./../../../NAME" for 3) then names a real file at <remote_logs_root>/NAME on the
    // host, while the same climb from the local log dir ~/.mltk/models/<model> reaches HOME.
    std::string deep_log_setting(int levels = 3) const;
    std::string deep_log_dir(const std::string& model, int levels = 3) const;
    // Writes `head` to `path` and makes it `size` bytes long: the rest is a hole (zeros)
    // when `pad` is '\0', else `pad` characters.
    void write_padded(const std::string& path, const std::string& head, std::uint64_t size,
                      char pad = '\0') const;

    // Lines of a training that start a process escaping the job (a new session, without the
    // job's MLT_RUN_ID and MLT_JOB_DIR, so the sweeper does not find it) running `body` (sh,
    // with `args` already quoted), and wait until it has escaped: before that it is still in
    // the job's group with the job's environment, and the sweeper would rightly stop it.
    std::string escaping_process(const std::string& body, const std::string& args = {}) const;

  private:
    HostileHost host_;
};

}  // namespace mlt_test
