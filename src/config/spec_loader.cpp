// Loading a model spec through the local MLTK in a child python3 to read its SshMixin values,
// and such a load started ahead of need.
#include "spec_loader.h"

#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "mlt/config/local_mltk.h"
#include "mlt/util/error.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/paths.h"
#include "mlt/util/process.h"
#include "spec_literals.h"

namespace mlt::settings_detail {

namespace {

// Run as `python3 -c <this> RESULT SPEC TEST`: the result goes to the file RESULT as JSON,
// away from whatever the spec prints. {"absent": why} when mltk cannot be imported,
// {"error": [lines]} when loading failed, else {"ssh": {key: value}} of every `ssh_*`
// property the model's class has whose value is set (MLTK: `value or default`). Each result
// also has "mltk_version": the imported mltk's __version__ ("" when it has none; the probe of
// local_mltk_version reads the same), null when mltk does not import. It ends with os._exit
// once the result is written: threads the spec left running do not hold it.
constexpr char kDriver[] = R"(import json, os, sys, traceback
result, spec, test = sys.argv[1], sys.argv[2], sys.argv[3] == '1'
def load():
    try:
        import mltk.core
    except ModuleNotFoundError as e:
        if e.name in ('mltk', 'mltk.core'):
            return {'absent': str(e)}
        raise
    model = mltk.core.load_mltk_model(spec, test=test, print_not_found_err=True)
    values = {}
    for name in dir(type(model)):
        if name.startswith('ssh_') and isinstance(getattr(type(model), name), property):
            value = getattr(model, name)
            if value is not None:
                values[name[4:]] = value
    return {'ssh': values}
try:
    outcome = load()
except BaseException as e:
    traceback.print_exc()
    outcome = {'error': (type(e).__name__ + ': ' + str(e)).strip().splitlines() or ['']}
mltk = sys.modules.get('mltk')
outcome['mltk_version'] = None if mltk is None else str(getattr(mltk, '__version__', ''))
with open(result, 'w') as f:
    json.dump(outcome, f, default=str)
sys.stdout.flush()
sys.stderr.flush()
os._exit(1 if 'error' in outcome else 0)
)";

constexpr size_t kTailLines = 10;

// A temp file for the driver's result, removed with this object.
class ResultFile {
  public:
    ResultFile() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "mlt-spec-XXXXXX").string();
        int fd = ::mkstemp(tmpl.data());
        if (fd < 0)
            throw io_error("cannot create a temporary file in " + tmpl + ": " +
                           std::strerror(errno));
        ::close(fd);
        path_ = tmpl;
    }
    ~ResultFile() { ::unlink(path_.c_str()); }
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

[[noreturn]] void load_failed(const SpecLoad& load, const std::string& what,
                              const std::deque<std::string>& tail) {
    // With -v every line was shown as it came; else the last ones explain the error.
    if (!spdlog::should_log(spdlog::level::debug))
        for (const auto& line : tail) spdlog::info("  {}", line);
    throw config_error(load.spec_path + " " + what,
                       "its last lines are above, -v shows all it printed; fix the spec (mltk "
                       "ssh train stops here too), or set spec_loader: literals to read its "
                       "literal ssh_* values without running it");
}

std::optional<std::string> no_mltk(const SpecLoad& load, const std::string& why) {
    if (load.require_mltk)
        throw config_error("spec_loader is mltk, but " + why,
                           "install MLTK where python3 finds it (pip install silabs-mltk), or "
                           "set spec_loader: auto or literals");
    spdlog::debug("{}: reading the literal ssh_* values of {}", why, load.spec_path);
    return std::nullopt;
}

// The `ssh` object of a result as the YAML document of the spec's layer.
std::string ssh_document(const SpecLoad& load, nlohmann::json ssh,
                         const std::set<std::string>& skip,
                         std::vector<SettingsWarning>* warnings) {
    nlohmann::json kept = nlohmann::json::object();
    const auto& keys = ssh_mixin_keys();
    for (auto& [key, value] : ssh.items()) {
        if (skip.count(key)) continue;  // the sidecar sets it and wins
        if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
            kept[key] = value;
        } else if (warnings) {
            warnings->push_back(SettingsWarning{
                load.spec_path, 1, 1,
                "MLTK's model has ssh_" + key + ", which mlt does not know (ignored)"});
        }
    }
    return nlohmann::json{{"ssh", kept}}.dump();
}

// What the load found of the local MLTK, for local_mltk_version (nothing when it said nothing).
void remember_mltk_version(const SpecLoad& load, const nlohmann::json& doc) {
    if (!doc.contains("mltk_version")) return;
    const nlohmann::json& version = doc.at("mltk_version");
    if (version.is_null())
        remember_local_mltk_version(load.python, std::nullopt);
    else if (version.is_string())
        remember_local_mltk_version(load.python, version.get<std::string>());
}

}  // namespace

SpecLoadOutcome run_spec_load(const SpecLoad& load, const std::atomic<bool>* stop) {
    ResultFile result;
    SpecLoadOutcome o;
    const std::string name = std::filesystem::path(load.spec_path).filename().string();
    spdlog::debug("loading {} through the local MLTK (python3, at most {} s)", load.spec_path,
                  std::chrono::duration_cast<std::chrono::seconds>(load.timeout).count());
    o.child = run_child(
        {load.python, "-c", kDriver, result.path(), load.spec_path, load.test ? "1" : "0"},
        load.timeout,
        [&](const std::string& line) {
            spdlog::debug("{}: {}", name, line);
            o.tail.push_back(line);
            if (o.tail.size() > kTailLines) o.tail.pop_front();
        },
        stop);
    if (o.child.started) o.result = read_file(result.path());
    return o;
}

std::optional<std::string> mltk_spec_yaml(const SpecLoad& load, const std::set<std::string>& skip,
                                          std::vector<SettingsWarning>* warnings,
                                          SpecLoadAhead* ahead) {
    SpecLoadOutcome o = ahead && ahead->loads(load) ? ahead->take() : run_spec_load(load);
    const ChildResult& r = o.child;
    const std::deque<std::string>& tail = o.tail;
    if (!r.started) {
        remember_local_mltk_version(load.python, std::nullopt);  // the probe could not run either
        return no_mltk(load, "python3 cannot run: " + std::string(std::strerror(r.start_errno)));
    }
    if (r.timed_out)
        load_failed(
            load,
            "did not load through MLTK within " +
                std::to_string(
                    std::chrono::duration_cast<std::chrono::seconds>(load.timeout).count()) +
                " s (stopped it and its process group)",
            tail);
    nlohmann::json doc = nlohmann::json::parse(o.result, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
        load_failed(load,
                    "did not load through MLTK: python3 ended with exit status " +
                        std::to_string(r.exit_code) + " and no result",
                    tail);
    remember_mltk_version(load, doc);
    if (doc.contains("absent")) return no_mltk(load, "python3 cannot import mltk");
    if (doc.contains("error") && doc["error"].is_array() && !doc["error"].empty())
        load_failed(load, "failed to load through MLTK: " + doc["error"][0].get<std::string>(),
                    tail);
    if (!doc.contains("ssh") || !doc["ssh"].is_object())
        load_failed(load, "did not load through MLTK: no ssh_* values came back", tail);
    return ssh_document(load, doc["ssh"], skip, warnings);
}

}  // namespace mlt::settings_detail

namespace mlt {

SpecLoadAhead::SpecLoadAhead(settings_detail::SpecLoad load)
    : load_(std::move(load)), thread_(thread_without_signals([this] {
          try {
              outcome_ = settings_detail::run_spec_load(load_, &stop_);
          } catch (...) {
              error_ = std::current_exception();
          }
      })) {}

SpecLoadAhead::~SpecLoadAhead() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

bool SpecLoadAhead::loads(const settings_detail::SpecLoad& load) const {
    return thread_.joinable() && load.spec_path == load_.spec_path && load.python == load_.python &&
           load.test == load_.test && load.timeout == load_.timeout;
}

settings_detail::SpecLoadOutcome SpecLoadAhead::take() {
    thread_.join();
    if (error_) std::rethrow_exception(error_);
    return std::move(outcome_);
}

}  // namespace mlt
