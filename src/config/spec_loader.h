#pragma once

// Loading a model spec through the local MLTK (`mltk.core.load_mltk_model`) in a child
// process, to read its SshMixin values as `mltk ssh train` does. Private to src/config/.

#include <atomic>
#include <chrono>
#include <deque>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mlt/config/settings.h"
#include "mlt/config/spec_options.h"
#include "mlt/util/process.h"

namespace mlt::settings_detail {

// How to load one spec.
struct SpecLoad {
    std::string spec_path;
    std::string python = "python3";  // looked up in PATH
    bool require_mltk = false;       // spec_loader: mltk (else auto)
    bool test = false;               // MLTK's test mode (a `-test` model)
    std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

// What python3 left of one load: how it ended, its result file, its last lines of output.
struct SpecLoadOutcome {
    ChildResult child;
    std::string result;  // the driver's JSON ("" when it wrote none)
    std::deque<std::string> tail;
};

// Runs the load; `stop` (when set) ends it early, as a timeout does.
SpecLoadOutcome run_spec_load(const SpecLoad& load, const std::atomic<bool>* stop = nullptr);

// The spec's `ssh_*` values as MLTK's loader sets them, as a YAML document
// `{"ssh": {...}}` (keys in `skip` left out; unknown `ssh_*` properties warned about), or
// nothing when `python` cannot run or import `mltk` and it is not required. Everything the
// spec prints is logged at debug level (shown with -v). Throws mlt::Error (config) when the
// spec fails to load (its error, its last lines of output logged first), does not load
// within the timeout (its process group is killed), or MLTK is required but missing.
// With `ahead` (a load started earlier, SpecLoadAhead) that loads the same spec the same way,
// its outcome is taken instead of running python3 again.
std::optional<std::string> mltk_spec_yaml(const SpecLoad& load, const std::set<std::string>& skip,
                                          std::vector<SettingsWarning>* warnings,
                                          SpecLoadAhead* ahead = nullptr);

}  // namespace mlt::settings_detail

namespace mlt {

// One load through MLTK started before it is needed, on a thread that blocks mlt's signals
// and only waits on python3 (run_child notices a pending signal itself).
class SpecLoadAhead {
  public:
    explicit SpecLoadAhead(settings_detail::SpecLoad load);
    // A load never taken is stopped (python3's process group killed), then joined.
    ~SpecLoadAhead();
    SpecLoadAhead(const SpecLoadAhead&) = delete;
    SpecLoadAhead& operator=(const SpecLoadAhead&) = delete;

    // Whether it loads what `load` asks for (the same spec, interpreter, test mode and bound)
    // and was not taken yet.
    bool loads(const settings_detail::SpecLoad& load) const;
    // Waits for its end; rethrows what the load threw (interrupted, io). Only after loads().
    settings_detail::SpecLoadOutcome take();

  private:
    settings_detail::SpecLoad load_;
    std::atomic<bool> stop_{false};
    settings_detail::SpecLoadOutcome outcome_;
    std::exception_ptr error_;
    std::thread thread_;  // last: it starts once the rest is in place
};

}  // namespace mlt
