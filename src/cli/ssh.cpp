// `mlt ssh [connection options] COMMAND ...`
#include <memory>

#include "mlt/cli/commands.h"
#include "mlt/train/ssh_command.h"

namespace mlt::cli {

void add_ssh_command(CLI::App& app, Action& action, int& verbosity) {
    auto* ssh = app.add_subcommand("ssh", "Train, inspect or stop a model on remote machines over SSH");
    // `-h` is the host, as in MLTK; help stays reachable as --help.
    ssh->set_help_flag("--help", "Print this help and exit");
    ssh->footer(
        "HOST is [user@]host[:port][/remote_dir] or a Host alias of ~/.ssh/config.\n"
        "Examples:\n"
        "  mlt ssh -h root@ssh4.example.net -p 35023 -i ~/.ssh/id_vast status\n"
        "  mlt ssh -h gpu-box/~/workspace -o StrictHostKeyChecking=yes status my_model");
    auto cli = std::make_shared<SshCommandLine>();
    ssh->add_option("-h,--host", cli->hosts, "Remote host; give it again for more nodes")
        ->type_name("HOST")
        ->allow_extra_args(false);  // one value per -h, so COMMAND is not taken for a host
    ssh->add_option("-p,--port", cli->port, "SSH port (overrides the host and ssh config)")
        ->check(CLI::Range(1, 65535));
    ssh->add_option("-i,--identity,--identity_file", cli->identity_file, "Private key file")->type_name("KEY");
    ssh->add_option_function<std::string>(
           "--password", [cli](const std::string& pw) { cli->password = pw; },
           "Password for password/keyboard-interactive auth (prefer keys; asked on the terminal when needed)")
        ->type_name("PW");
    ssh->add_option("-o", cli->ssh_options,
                    "OpenSSH option: StrictHostKeyChecking, UserKnownHostsFile, ConnectTimeout, "
                    "Port, User, IdentityFile, Ciphers, ServerAliveInterval, ServerAliveCountMax")
        ->type_name("Key=Value")
        ->allow_extra_args(false);
    ssh->add_option("-F", cli->ssh_config, "ssh client config file (default ~/.ssh/config)")
        ->type_name("FILE");
    ssh->add_flag("-v,--verbose", verbosity, "More detail on stderr (-vv: libssh protocol trace)");

    auto* status = ssh->add_subcommand("status", "Show the remote job(s): running/finished/none");
    status->set_help_flag("--help", "Print this help and exit");
    auto model = std::make_shared<std::string>();
    status->add_option("MODEL", *model, "Model name or spec path (default: all models)");
    status->callback([&action, cli, model] {
        action = [cli, model] { return run_status(*cli, *model); };
    });
    add_ssh_job_commands(*ssh, action, cli, verbosity);
}

}  // namespace mlt::cli
