// `mlt ssh ... train|logs|stop|download MODEL`
#include <memory>
#include <vector>

#include "mlt/cli/commands.h"
#include "mlt/commands/job_commands.h"
#include "mlt/commands/train.h"
#include "mlt/commands/train_arguments.h"
#include "mlt/util/error.h"
#include "mlt/util/text.h"

namespace mlt::cli {

namespace {

// The flags `mlt ssh` takes before COMMAND only for train.
constexpr const char* kTrainOnly[] = {"--clean", "--force", "--resume", "--no-wait"};

// MLTK's `ssh` takes these before COMMAND as well as after MODEL; each has its --no- form
// (for --no-wait: --wait), and the last one given wins.
void add_job_flags(CLI::App& app, TrainOptions& o, const std::string& group) {
    app.add_flag("--clean,!--no-clean", o.clean, "Delete local and remote logs and archive first")
        ->group(group);
    app.add_flag("--force,!--no-force", o.force,
                 "Stop or discard an existing job of this model first")
        ->group(group);
    app.add_flag("--resume,!--no-resume", o.resume,
                 "Reattach to a running job, or collect a finished one")
        ->group(group);
    app.add_flag("--no-wait,!--wait", o.no_wait,
                 "Return once the job runs (collect later with --resume); with --resume: show what "
                 "is new and return while it runs (MLTK's poll)")
        ->group(group);
}

// --price, --max-hours, --max-cost: the run's cost, and the limits that stop it (exit 5).
void add_budget_options(CLI::App& app, TrainOptions& o) {
    app.add_option_function<double>(
           "--price", [&o](double usd) { o.price = usd; },
           "USD per hour of the host: the cost shown while waiting, in the summary and in "
           "the history (default: setting price_per_hour)")
        ->type_name("USD")
        ->transform(real_in(0, 1e6, false, "a price in USD per hour (0 or more, e.g. 1.25)"));
    app.add_option_function<double>(
           "--max-hours", [&o](double h) { o.max_hours = h; },
           "Stop the job once the run has lasted H hours (all attempts), collect, exit 5")
        ->type_name("H")
        ->transform(real_in(0, 1e6, true, "a number of hours above 0 (e.g. 0.5)"));
    app.add_option_function<double>(
           "--max-cost", [&o](double usd) { o.max_cost = usd; },
           "Stop the job once the run has cost USD (needs --price or price_per_hour), collect, "
           "exit 5")
        ->type_name("USD")
        ->transform(real_in(0, 1e9, true, "an amount of USD above 0 (e.g. 20)"));
}

// train's and logs' --raw-console.
const char* const kRawConsoleHelp =
    "Show the console log as the remote wrote it (default: text, colours, progress bars; "
    "sequences that set the title, clear the screen or write the clipboard are dropped)";

// The end of `mlt ssh train --help`: MODEL, ARGS, settings, results, examples.
const char* const kTrainFooter =
    "MODEL: a model name (NAME.py is looked for in model_paths, the current directory,\n"
    "  MLTK_MODEL_PATHS), NAME-test for its test model, or a spec path (path/to/NAME.py).\n"
    "ARGS: everything after MODEL that is not an option above goes, in its order, to the\n"
    "  training command (train_cmd); after -- every word does. --test trains the test model\n"
    "  NAME-test (and is passed on, as MLTK does). mlt's options may also stand after MODEL.\n"
    "  With --resume a NAME is enough on a machine without its spec (settings: the user\n"
    "  file and the command line), unless the run must upload again.\n"
    "Settings: the ssh: section of ~/.mltk/user_settings.yaml (or $MLTK_USER_SETTINGS_PATH)\n"
    "  and of MODEL.ssh.yaml beside the spec, and the spec's SshMixin values "
    "(docs/settings.md).\n"
    "Results: MODEL.mltk.zip beside the spec (download_files there too); the remote logs and\n"
    "  the console log mltk_ssh_train_MODEL.log in ${MLTK_CACHE_DIR:-~/.mltk}/models/MODEL/.\n"
    "  Then the remote machine may still be billing: stop or destroy it when you are done.\n"
    "Examples:\n"
    "  mlt ssh -h root@ssh4.example.net -p 35023 -i ~/.ssh/id_vast train my_model --clean\n"
    "  mlt ssh train my_model -h gpu -p 2222 -i ~/.ssh/id_gpu --epochs 3 --weights best\n"
    "  mlt ssh -h gpu --force train my_model --test   # test model my_model-test\n"
    "  mlt ssh -h gpu train my_model --dry-run   # the plan; connects to nothing\n"
    "  mlt ssh -h gpu train my_model --no-wait   # later: ... train my_model --resume\n"
    "  mlt ssh -h gpu train my_model -- -v --clean   # after --, words go to the training\n"
    "  mlt ssh -h gpu -o ServerAliveInterval=5 train my_model --reconnect-timeout 3600\n"
    "      # a flaky link: a silent link noticed after 15 s, reconnect for up to an hour";

// Everything mlt itself takes after `train`: declared on the train subcommand (its --help and
// the words before MODEL) and again on the parser of mlt's words after MODEL.
void add_train_options(CLI::App& app, TrainOptions& o, SshCommandLine& cli, int& verbosity) {
    add_job_flags(app, o, "Options");
    app.add_option("--workspace", o.workspace,
                   "Sync this project directory to the remote dir first (honours .mltignore and "
                   ".gitignore; never .git/, .env, id_*, *.pem, *.key)")
        ->check(non_empty("workspace path", "give the project directory or leave --workspace out"))
        ->type_name("DIR");
    app.add_option_function<int>(
           "--reconnect-timeout", [&o](int s) { o.reconnect_timeout = s; },
           "Seconds to keep reconnecting after the link dropped (default: setting "
           "reconnect_timeout, 600); 0: give up at once")
        ->type_name("S")
        ->transform(decimal_in(0, 604800));
    app.add_option_function<int>(
           "--max-restarts", [&o](int n) { o.max_restarts = n; },
           "Restart a job found lost (processes gone, no exit status) up to N times, in place "
           "(default: setting max_restarts, 0)")
        ->type_name("N")
        ->transform(decimal_in(0, 1000));
    app.add_flag("--restore", o.restore,
                 "Push the local log dir (checkpoints that came home) to the remote log dir "
                 "before the job starts, for a training that resumes from its newest checkpoint");
    app.add_flag("--no-failover", o.no_failover,
                 "Never continue on a fallback_hosts / provision_cmd host when the host is lost");
    app.add_flag("--rent", o.rent,
                 "Rent the machine from the settings' provider (vast.ai, RunPod) even when a host "
                 "is given, and release it when the run is over (docs/providers.md)");
    add_budget_options(app, o);
    app.add_flag("--raw-console", o.raw_console, kRawConsoleHelp);
    app.add_option_function<int>(
           "--sync-every", [&o](int s) { o.sync_every = s; },
           "Pull the remote log dir (logs, checkpoints) every S seconds while training, on a "
           "second connection (default: setting sync_every, 0); 0: only at the end")
        ->type_name("S")
        ->transform(decimal_in(0, 604800));
    app.add_option_function<std::string>(
           "--connections",
           [&o](const std::string& n) { o.connections = n == "auto" ? 0 : std::stoi(n); },
           "SSH connections a file of 32 MiB or more moves over as ranges: auto (as many, and "
           "as many channels, as pay for the host's login cost, up to 8; over a near link at "
           "most one per two local cores, and ranges only from 256 MiB) or N (default: setting "
           "transfer.connections, auto)")
        ->type_name("auto|N")
        ->check([](const std::string& n) {
            return n == "auto" || parse_decimal(n, 1, 8)
                       ? std::string()
                       : std::string("expected auto or a number from 1 to 8");
        });
    app.add_flag("--dry-run", o.dry_run,
                 "Print the plan (host, uploads and what is left out, commands, environment "
                 "names, limits, rules, sync, failover, notifications) and exit 0: checks as "
                 "train does, connects to nothing, sends nothing");
    add_verbose_flag(app, verbosity, "More detail; the training sees MLT_VERBOSE=1");
    add_connection_options(app, cli, "Connection options (as before train; not passed on)");
}

// The names and arity of the options `app` declares, for splitting the words after MODEL.
std::vector<OwnOption> own_options(const CLI::App& app) {
    std::vector<OwnOption> own;
    for (const CLI::Option* opt : app.get_options()) {
        if (!opt->nonpositional()) continue;
        OwnOption o;
        for (const auto& l : opt->get_lnames()) o.names.push_back("--" + l);
        for (const auto& s : opt->get_snames()) o.names.push_back("-" + s);
        o.takes_value = opt->get_items_expected_max() > 0;  // flags expect none
        own.push_back(std::move(o));
    }
    return own;
}

}  // namespace

void reject_train_flags(const CLI::App& ssh, const std::string& command) {
    for (const char* name : kTrainOnly) {
        const CLI::Option* opt = ssh.get_option_no_throw(name);
        if (!opt || opt->count() == 0) continue;
        std::string names;  // --clean/--no-clean
        for (const auto& l : opt->get_lnames()) names += (names.empty() ? "--" : "/--") + l;
        throw CLI::ValidationError(names, "only train takes it, not " + command);
    }
}

// A command of `mlt ssh` on one MODEL (--test: NAME-test); returns it for its own options.
using ModelRun = std::function<int(const SshCommandLine&, const std::string&, bool)>;
CLI::App* add_model_command(CLI::App& ssh, Action& action,
                            const std::shared_ptr<SshCommandLine>& cli, const char* name,
                            const char* help, ModelRun run) {
    auto* cmd = ssh.add_subcommand(name, help);
    cmd->set_help_flag("--help", "Print this help and exit");
    auto model = std::make_shared<std::string>();
    cmd->add_option("MODEL", *model,
                    "Model name (its spec need not be on this machine) or spec path")
        ->check(non_empty("model name", "give the model's name or spec path"))
        ->required();
    auto test = std::make_shared<bool>(false);
    cmd->add_flag("--test", *test, "The test model NAME-test (as train MODEL --test)");
    cmd->callback([&action, &ssh, cli, model, test, run, name] {
        reject_train_flags(ssh, name);
        action = [cli, model, test, run] { return run(*cli, *model, *test); };
    });
    return cmd;
}

void add_ssh_job_commands(CLI::App& ssh, Action& action, const std::shared_ptr<SshCommandLine>& cli,
                          int& verbosity, TrainRunner run_training) {
    auto opts = std::make_shared<TrainOptions>();
    add_job_flags(ssh, *opts, "Options of train (also after MODEL)");

    auto* train =
        ssh.add_subcommand("train", "Upload, train remotely, stream the log, collect the results");
    train->set_help_flag("--help", "Print this help and exit");
    // MODEL and everything after it reach the callback as typed (CLI11 would separate the
    // positional words from the unknown options and so reorder them); there mlt's own
    // options are picked out and the rest goes, in its order, to the training command.
    train->prefix_command();
    train->allow_extras();
    train->formatter(help_formatter(" MODEL [ARGS...]"));
    add_train_options(*train, *opts, *cli, verbosity);
    train->footer(kTrainFooter);
    train->callback([&action, &verbosity, cli, opts, train, run_training] {
        TrainArguments words = split_train_arguments(train->remaining(), own_options(*train));
        // mlt's options after MODEL, parsed by the same declarations (and after those given
        // before: the last one wins); --help among them shows train's help.
        CLI::App after;
        after.set_help_flag("--help");
        add_train_options(after, *opts, *cli, verbosity);
        std::vector<std::string> reversed(words.own.rbegin(), words.own.rend());
        after.parse(reversed);
        opts->model = words.model;
        opts->args = words.passed;
        opts->verbose = verbosity > 0;
        action = [cli, opts, run_training] { return run_training(*cli, *opts); };
    });

    auto logs_rank = std::make_shared<int>(-1);  // logs --rank N; -1: every node
    auto logs_follow = std::make_shared<bool>(false);
    auto logs_raw = std::make_shared<bool>(false);  // logs --raw-console
    auto tb_port = std::make_shared<int>(6006);     // tensorboard --port P
    auto tb_local = std::make_shared<int>(-1);      // tensorboard --local-port L; -1: P
    const auto model_command = [&](const char* name, const char* help, ModelRun run) {
        return add_model_command(ssh, action, cli, name, help, std::move(run));
    };
    auto* logs = model_command(
        "logs", "Print the remote console log (-f: follow it)",
        [logs_rank, logs_follow, logs_raw](const SshCommandLine& c, const std::string& m, bool t) {
            return run_logs(c, m, t, *logs_follow, *logs_rank, *logs_raw);
        });
    logs->add_flag("-f,--follow", *logs_follow, "Keep printing as the log grows");
    logs->add_flag("--raw-console", *logs_raw, kRawConsoleHelp);
    logs->add_option("--rank", *logs_rank,
                     "With several nodes: only node N's log (0: the first host)")
        ->type_name("N")
        ->transform(decimal_in(0, 1000));
    model_command(
        "stop", "Stop the remote job (TERM, then KILL) and release its lock",
        [](const SshCommandLine& c, const std::string& m, bool t) { return run_stop(c, m, t); });
    model_command("download", "Pull archive, logs and download_files now; leave the job alone",
                  [](const SshCommandLine& c, const std::string& m, bool t) {
                      return run_download(c, m, t);
                  });
    auto* tb =
        model_command("tensorboard",
                      "Start TensorBoard on the remote for the model's log dir and reach "
                      "it here until Ctrl+C\n\nExample:\n  mlt ssh -h gpu tensorboard "
                      "my_model   # then open http://127.0.0.1:6006",
                      [tb_port, tb_local](const SshCommandLine& c, const std::string& m, bool t) {
                          return run_tensorboard(c, m, t, *tb_port, *tb_local);
                      });
    tb->add_option("--port", *tb_port,
                   "Port of TensorBoard on the remote's loopback and here (default 6006)")
        ->type_name("P")
        ->transform(decimal_in(1, 65535));
    tb->add_option("--local-port", *tb_local,
                   "Port here, when it differs (0: a free one; default: --port)")
        ->type_name("L")
        ->transform(decimal_in(0, 65535));
}

}  // namespace mlt::cli
