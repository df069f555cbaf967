#pragma once
// What the job commands (train, logs, stop, download) work out locally before anything remote:
// the model's files and nodes (RunContext), the uploads, the wrapper, the plan of a run.
// Private to src/commands.

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mlt/commands/model.h"
#include "mlt/commands/model_settings.h"
#include "mlt/commands/targets.h"
#include "mlt/commands/train.h"
#include "mlt/job/job.h"
#include "mlt/train/run/train_plan.h"
#include "mlt/transfer/transfer.h"
#include "mlt/transfer/workspace.h"

namespace mlt::command_detail {

// The local console log's name, MLTK's for `mltk ssh train`: this prefix, the model, ".log".
constexpr char kConsoleLogPrefix[] = "mltk_ssh_train_";

// Everything one command needs to know about the model and where its files go.
struct RunContext {
    ModelRef model;
    SshSettings settings;
    Target target;                // the node this context is for (rank 0 at first)
    std::vector<Target> targets;  // every node: -h given more than once, or the settings'
    std::string remote_log_dir;
    std::string archive;  // relative to the remote dir
    std::string local_logs;
    std::string local_console;
    std::string local_archive;
    std::string local_dir;  // where the archive and download_files land: the spec's dir
};

// remote_log_dir for one node: placeholders are plain text substitutions, the result is one
// path. Empty: the job finds the log dir on the remote (the remote MLTK's).
std::string node_log_dir(const std::string& setting, const std::string& model,
                         const std::string& remote_dir);
// The context of `model_arg` for one command, read as every job command reads it.
// `spec_optional`: a bare model NAME whose spec is not here is enough
// (resolve_model_settings); `several`: the command takes several nodes; `ahead`: the spec's
// load started before (start_spec_load_ahead).
RunContext prepare(const SshCommandLine& cli, const std::string& model_arg, bool test,
                   bool spec_optional, bool several = false,
                   std::shared_ptr<SpecLoadAhead> ahead = nullptr, bool may_rent = false);
// The same for the settings `m` already read.
RunContext context_of(ModelSettings m, const SshCommandLine& cli, bool several);
// The `train MODEL --resume` and `stop MODEL` lines for `cli`'s hosts: MODEL as typed, so a
// spec path still finds its spec; --test keeps the test model.
std::pair<std::string, std::string> resume_and_stop_lines(const SshCommandLine& cli,
                                                          const std::string& model_arg, bool test);
// What collection and the run engine need to know of a model's files (no uploads, no job).
TrainPlan plan_for(const RunContext& c, const SshCommandLine& cli, const std::string& model_arg,
                   bool test);

// --clean removes remote_log_dir: refused (exit 2, before any remote action) when the
// settings name something that holds more than the model's logs.
void check_clean_target(const RunContext& c);
// The same for the local log dir: never `/`, home, a dir holding the spec, the workspace or
// the current dir, or mlt's own state.
void check_local_clean_target(const RunContext& c, const std::string& workspace);
// The uploads, grouped by remote base directory, all checked locally before any remote action.
// What the workspace and upload_files leave out is appended to `left_out` when given.
std::map<std::string, std::vector<UploadItem>> plan_uploads(
    const RunContext& c, const std::string& workspace,
    std::vector<LeftOutFile>* left_out = nullptr);
// The job wrapper's spec for a run of `c` with the options `o`.
WrapperSpec wrapper_for(const RunContext& c, const TrainOptions& o);

}  // namespace mlt::command_detail
