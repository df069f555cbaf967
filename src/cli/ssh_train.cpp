// `mlt ssh ... train|logs|stop|download MODEL`
#include <algorithm>
#include <memory>

#include "mlt/cli/commands.h"
#include "mlt/train/train_command.h"

namespace mlt::cli {

void add_ssh_job_commands(CLI::App& ssh, Action& action, const std::shared_ptr<SshCommandLine>& cli,
                          int& verbosity) {
    auto* train = ssh.add_subcommand("train", "Upload, train remotely, stream the log, collect the results");
    train->set_help_flag("--help", "Print this help and exit");
    // mlt's own flags are recognised anywhere (MLTK: `train my_model --clean`); everything
    // else after MODEL goes to the training command.
    train->allow_extras();
    auto opts = std::make_shared<TrainOptions>();
    train->add_option("MODEL", opts->model, "Model name or spec path (NAME, NAME-test, path/to/NAME.py)")
        ->required();
    auto positional = std::make_shared<std::vector<std::string>>();
    train->add_option("ARGS", *positional, "Arguments for the training command (after MODEL; use -- before options)");
    train->add_flag("--clean", opts->clean, "Delete local and remote logs and archive first");
    train->add_flag("--force", opts->force, "Stop or discard an existing job of this model first");
    train->add_flag("--resume", opts->resume, "Reattach to a running job, or collect a finished one");
    train->add_flag("--no-wait", opts->no_wait, "Return once the job runs (collect later with --resume)");
    train->add_option("--workspace", opts->workspace,
                      "Sync this project directory to the remote dir first (honours .mltignore and "
                      ".gitignore; never .git/, .env, id_*, *.pem, *.key)")
        ->type_name("DIR");
    train->add_option_function<int>(
             "--reconnect-timeout", [opts](int s) { opts->reconnect_timeout = s; },
             "Seconds to keep reconnecting after the link dropped (default: setting "
             "reconnect_timeout, 600); 0: give up at once")
        ->type_name("S")
        ->check(CLI::Range(0, 604800));
    train->add_flag("-v,--verbose", verbosity, "More detail; the training sees MLT_VERBOSE=1");
    train->footer(
        "Examples:\n"
        "  mlt ssh -h root@ssh4.example.net -p 35023 -i ~/.ssh/id_vast train my_model --clean\n"
        "  mlt ssh -h gpu train my_model --no-wait   # later: ... train my_model --resume\n"
        "  mlt ssh -h gpu train my_model-test -- --epochs 2   # args after MODEL go to train_cmd\n"
        "  mlt ssh -h gpu -o ServerAliveInterval=5 train my_model --reconnect-timeout 3600\n"
        "      # a flaky link: a silent link noticed after 15 s, reconnect for up to an hour");
    train->callback([&action, &verbosity, cli, opts, train, positional] {
        opts->args = train->remaining();
        opts->args.insert(opts->args.end(), positional->begin(), positional->end());
        // `--` only separates mlt's options from the training's; it is not passed on.
        opts->args.erase(std::remove(opts->args.begin(), opts->args.end(), "--"), opts->args.end());
        opts->verbose = verbosity > 0;
        action = [cli, opts] { return run_train(*cli, *opts); };
    });

    auto model_command = [&](const char* name, const char* help, auto run) {
        auto* cmd = ssh.add_subcommand(name, help);
        cmd->set_help_flag("--help", "Print this help and exit");
        auto model = std::make_shared<std::string>();
        cmd->add_option("MODEL", *model, "Model name or spec path")->required();
        auto follow = std::make_shared<bool>(false);
        if (std::string(name) == "logs") cmd->add_flag("-f,--follow", *follow, "Keep printing as the log grows");
        cmd->callback([&action, cli, model, follow, run] {
            action = [cli, model, follow, run] { return run(*cli, *model, *follow); };
        });
    };
    model_command("logs", "Print the remote console log (-f: follow it)",
                  [](const SshCommandLine& c, const std::string& m, bool f) { return run_logs(c, m, f); });
    model_command("stop", "Stop the remote job (TERM, then KILL) and release its lock",
                  [](const SshCommandLine& c, const std::string& m, bool) { return run_stop(c, m); });
    model_command("download", "Pull archive, logs and download_files now; leave the job alone",
                  [](const SshCommandLine& c, const std::string& m, bool) { return run_download(c, m); });
}

}  // namespace mlt::cli
