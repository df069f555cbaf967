// `mlt ssh ... logs|stop|download`: one job command on the job of a model.
#include "mlt/commands/job_commands.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include "mlt/commands/model.h"
#include "mlt/commands/train_arguments.h"
#include "mlt/job/job.h"
#include "mlt/ssh/session.h"
#include "mlt/train/local/local_state.h"
#include "mlt/train/nodes/nodes.h"
#include "mlt/train/recovery/failover.h"
#include "mlt/train/run/train_run.h"
#include "mlt/transfer/ranges.h"
#include "mlt/transfer/sync.h"
#include "mlt/transfer/transfer.h"
#include "mlt/transfer/workspace.h"
#include "mlt/util/console_filter.h"
#include "mlt/util/error.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/paths.h"
#include "mlt/util/reporter.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"
#include "run_context.h"
namespace fs = std::filesystem;

namespace mlt {

using namespace command_detail;

namespace {

// One node's console log to `out`: all of it, then with `follow` what comes until its job
// ends, filtered as train's follow is (all of it with `raw`). A signal ends it with the
// signal's code.
int show_log(const Target& t, const std::string& model, bool follow, bool raw, Reporter& out) {
    Session session = Session::open(t.connect);
    SessionRemote remote(session);
    ConsoleFilter shown(raw);
    const auto print = [&out, &shown](std::string_view d) { out.console(shown.feed(d)); };
    try {
        uint64_t offset = JobDir(remote, t.remote_dir, model).read_log(Task::job, 0, print);
        if (follow)
            JobDir(remote, t.remote_dir, model)
                .follow_to_end(Task::job, nullptr, offset, kFollowSegmentSeconds, print);
    } catch (const Error& e) {
        if (!is_signal(e.kind())) throw;
        return e.code();
    }
    return exit_code::kOk;
}

// `logs -f` of several nodes: one follow per node, all at once, their lines merged whole
// and prefixed [rank N]. A node whose log cannot be read says so and the others go on; the
// exit status is the first failure's.
int follow_all_logs(const std::vector<Target>& targets, const std::string& model, bool raw) {
    std::vector<std::unique_ptr<PrefixReporter>> outs;
    for (size_t i = 0; i < targets.size(); ++i)
        outs.push_back(
            std::make_unique<PrefixReporter>(reporter(), "[rank " + std::to_string(i) + "] "));
    std::vector<int> codes(targets.size(), exit_code::kOk);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < targets.size(); ++i)
        threads.push_back(thread_without_signals([&, i] {
            codes[i] = node_outcome(
                *outs[i], [&] { return show_log(targets[i], model, true, raw, *outs[i]); });
        }));
    for (auto& t : threads) t.join();
    for (int code : codes)
        if (code != exit_code::kOk) return code;
    return exit_code::kOk;
}

}  // namespace

int run_logs(const SshCommandLine& cli, const std::string& model, bool test, bool follow, int rank,
             bool raw_console) {
    install_interrupt_handler();
    RunContext c = prepare(cli, model, test, true, true);
    const size_t nodes = c.targets.size();
    if (rank >= 0 && static_cast<size_t>(rank) >= nodes)
        throw usage_error("--rank " + std::to_string(rank) + ": the run has " +
                              std::to_string(nodes) + " node(s) (one per -h)",
                          "give a rank from 0 to " + std::to_string(nodes - 1));
    if (rank >= 0)
        return show_log(c.targets[static_cast<size_t>(rank)], c.model.name, follow, raw_console,
                        reporter());
    if (nodes == 1) return show_log(c.targets[0], c.model.name, follow, raw_console, reporter());
    if (follow) return follow_all_logs(c.targets, c.model.name, raw_console);
    for (size_t i = 0; i < nodes; ++i) {  // node after node, each one's lines together
        PrefixReporter prefixed(reporter(), "[rank " + std::to_string(i) + "] ");
        if (int code = show_log(c.targets[i], c.model.name, false, raw_console, prefixed))
            return code;
    }
    return exit_code::kOk;
}

int run_stop(const SshCommandLine& cli, const std::string& model, bool test) {
    // With one -h per node, every node's job is stopped (its own process group), in turn.
    RunContext c = prepare(cli, model, test, true, true);
    const size_t nodes = c.targets.size();
    for (size_t i = 0; i < nodes; ++i) {
        const Target& t = c.targets[i];
        PrefixReporter prefixed(reporter(), "[rank " + std::to_string(i) + "] ");
        Reporter& out = nodes > 1 ? prefixed : reporter();
        Session session = Session::open(t.connect);
        SessionRemote remote(session);
        switch (JobDir(remote, t.remote_dir, c.model.name).stop_and_release(10)) {
            case StopOutcome::stopped:
                out.notice("stopped the job of " + c.model.name);
                break;
            case StopOutcome::finished:
                out.notice("the job of " + c.model.name +
                           " had finished already, and its results were not collected; "
                           "'train " +
                           c.model.name + " --resume' collects them");
                break;
            case StopOutcome::none:
                out.notice("no running job of " + c.model.name + "; lock released");
                break;
        }
    }
    return exit_code::kOk;
}

int run_download(const SshCommandLine& cli, const std::string& model, bool test) {
    RunContext c = prepare(cli, model, test, true);
    const TrainPlan plan = plan_for(c, cli, model, test);
    LocalModelLock local_lock(plan.local_state_dir, plan.model);
    SessionConnection connection(c.target.connect);
    Remote& remote = connection.remote();
    ConnectionLinks links(connection, plan.transfer_connections);
    LocalConsole console(plan.local_console, plan.local_state_dir);
    // Sent with the status on a guess: the run is the one the local copy is of, and it
    // recorded no archive: the read of its console from where the copy ends, and the log
    // dir's listing (a guess that misses costs those bytes, not a round trip).
    const auto [copy_run, copy_size] = console.copy_of();
    if (!copy_run.empty()) {
        JobDir(remote, c.target.remote_dir, c.model.name)
            .read_log_ahead_on_guess(Task::job, copy_size);
        JobResult guessed;
        guessed.run_id = copy_run;
        collect_results_ahead(remote, plan, guessed, true);
    }
    const JobResult result = JobDir(remote, c.target.remote_dir, c.model.name).read_job_result();
    if (result.run_id.empty()) {
        // No job dir of a known run (a wrong host or remote dir, or an old mlt's job): the
        // local copy of the last run's console log stays as it is.
        reporter().notice("no run of " + c.model.name + " in " + c.target.remote_dir + " on " +
                          remote.name() + "; the local console log is left as it is");
    } else {
        const uint64_t offset = console.open(result.run_id);
        collect_results_ahead(remote, plan, result, false);  // goes with the console's read
        JobDir(remote, c.target.remote_dir, c.model.name)
            .read_log(Task::job, offset, [&](std::string_view d) { console.append(d); });
    }
    collect_results(remote, plan, result,
                    checked_compression([&]() -> Remote& { return remote; }, plan.compression),
                    reporter(), &links);
    return exit_code::kOk;
}

}  // namespace mlt
