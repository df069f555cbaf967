// `mlt ssh [connection options] COMMAND ...`
#include <cstdint>
#include <memory>
#include <utility>

#include "mlt/cli/app.h"
#include "mlt/cli/commands.h"
#include "mlt/commands/doctor.h"
#include "mlt/commands/forward.h"
#include "mlt/commands/model_settings.h"
#include "mlt/commands/status.h"
#include "mlt/commands/targets.h"
#include "mlt/provider/run_rental.h"
#include "mlt/util/text.h"

namespace mlt::cli {

namespace {

// CLI11 shows a negated flag as `--no-clean{false}`; the value is no news to the reader.
class HelpFormatter : public CLI::Formatter {
  public:
    explicit HelpFormatter(std::string usage_tail) : usage_tail_(std::move(usage_tail)) {}

    std::string make_usage(const CLI::App* app, std::string name) const override {
        std::string usage = CLI::Formatter::make_usage(app, std::move(name));
        if (!usage_tail_.empty() && !usage.empty() && usage.back() == '\n')
            usage.insert(usage.size() - 1, usage_tail_);
        return usage;
    }

    std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
        std::string name = CLI::Formatter::make_option_name(opt, is_positional);
        for (const char* value : {"{false}", "{true}"})
            for (std::size_t at; (at = name.find(value)) != std::string::npos;)
                name.erase(at, std::string(value).size());
        return name;
    }

  private:
    std::string usage_tail_;
};

// The names of `names` ("-p,--port") that `app` does not declare yet: tensorboard's --port is
// its own, so after tensorboard only -p is the SSH port.
std::string free_names(const CLI::App& app, const std::string& names) {
    std::string free;
    for (const std::string& name : CLI::detail::split(names, ','))
        if (app.get_option_no_throw(name) == nullptr) free += (free.empty() ? "" : ",") + name;
    return free;
}

}  // namespace

CLI::Validator decimal_in(long long lo, long long hi) {
    const std::string range = std::to_string(lo) + " to " + std::to_string(hi);
    return CLI::Validator(
        [lo, hi, range](std::string& text) -> std::string {
            // Handed on as plain digits: CLI11 would read a leading 0 as octal.
            if (const auto value = parse_decimal(text, lo, hi)) {
                text = std::to_string(*value);
                return {};
            }
            return "'" + printable(text, 40) + "' is not a decimal number from " + range;
        },
        "NUMBER in " + range);
}

CLI::Validator real_in(double lo, double hi, bool above_lo, const std::string& expected) {
    return CLI::Validator(
        [lo, hi, above_lo, expected](std::string& text) -> std::string {
            const auto value = parse_real(text, lo, hi);
            if (value && (!above_lo || *value > lo)) return {};
            return "'" + printable(text, 40) + "' is not " + expected;
        },
        "NUMBER");
}

CLI::Validator non_empty(const std::string& what, const std::string& hint) {
    return CLI::Validator(
        [what, hint](std::string& text) -> std::string {
            return text.empty() ? "empty " + what + "; " + hint : "";
        },
        "");
}

std::shared_ptr<CLI::Formatter> help_formatter(const std::string& usage_tail) {
    return std::make_shared<HelpFormatter>(usage_tail);
}

void add_connection_options(CLI::App& app, SshCommandLine& cli, const std::string& group) {
    app.add_option_function<std::vector<std::string>>(
           free_names(app, "-h,--host"),
           [&cli](const std::vector<std::string>& hosts) {
               cli.hosts.insert(cli.hosts.end(), hosts.begin(), hosts.end());
           },
           "Remote host; give it again for more nodes")
        ->type_name("HOST")
        ->allow_extra_args(false)  // one value per -h, so COMMAND is not taken for a host
        ->group(group);
    app.add_option(free_names(app, "-p,--port"), cli.port,
                   "SSH port (beats a :port in HOST and the ssh config)")
        ->transform(decimal_in(1, 65535))
        ->group(group);
    app.add_option(free_names(app, "-i,--identity,--identity_file"), cli.identity_file,
                   "Private key file")
        ->check(non_empty("key file", "give the key or leave -i out"))
        ->type_name("KEY")
        ->group(group);
    app.add_option_function<std::string>(
           free_names(app, "--password"), [&cli](const std::string& pw) { cli.password = pw; },
           "Password for password/keyboard-interactive auth (prefer keys; asked on the terminal "
           "when needed)")
        ->type_name("PW")
        ->group(group);
    // Appended, not assigned: -o before train and -o after MODEL all count, in their order.
    app.add_option_function<std::vector<std::string>>(
           free_names(app, "-o"),
           [&cli](const std::vector<std::string>& options) {
               cli.ssh_options.insert(cli.ssh_options.end(), options.begin(), options.end());
           },
           "OpenSSH option: StrictHostKeyChecking, UserKnownHostsFile, ConnectTimeout, Port, "
           "User, IdentityFile, Ciphers, ServerAliveInterval, ServerAliveCountMax, "
           "ProxyCommand, ProxyJump")
        ->type_name("Key=Value")
        ->allow_extra_args(false)
        ->group(group);
    app.add_option(free_names(app, "-F"), cli.ssh_config,
                   "ssh client config file (default ~/.ssh/config)")
        ->check(non_empty("ssh config path", "give the file or leave -F out"))
        ->type_name("FILE")
        ->group(group);
}

void add_verbose_flag(CLI::App& app, int& verbosity, const std::string& help) {
    app.add_flag_function(
        "-v,--verbose", [&verbosity](std::int64_t n) { verbosity += static_cast<int>(n); }, help);
}

namespace {

// A command of `mlt ssh` whose one argument is an optional MODEL (status, doctor): its help,
// MODEL's, the hint for an empty one, and what runs it.
void add_optional_model_command(CLI::App& ssh, Action& action,
                                const std::shared_ptr<SshCommandLine>& cli, const std::string& name,
                                const std::string& help, const std::string& model_help,
                                const std::string& empty_hint,
                                int (*run)(const SshCommandLine&, const std::string&)) {
    auto* command = ssh.add_subcommand(name, help);
    command->set_help_flag("--help", "Print this help and exit");
    auto model = std::make_shared<std::string>();
    command->add_option("MODEL", *model, model_help)->check(non_empty("model name", empty_hint));
    command->callback([&action, &ssh, cli, model, name, run] {
        reject_train_flags(ssh, name);
        action = [cli, model, run] { return run(*cli, *model); };
    });
}

// `instances` and `release`: the machines mlt rented (docs/providers.md).
void add_rented_commands(CLI::App& ssh, Action& action) {
    auto* list = ssh.add_subcommand(
        "instances",
        "List every machine mlt rented (provider:) that still exists, with its state, billed "
        "price and cost so far\n\nExample:\n  mlt ssh instances --json");
    list->set_help_flag("--help", "Print this help and exit");
    auto json = std::make_shared<bool>(false);
    list->add_flag("--json", *json, "Print JSON instead of a table");
    list->callback([&action, &ssh, json] {
        reject_train_flags(ssh, "instances");
        action = [json] { return run_instances(*json); };
    });
    auto* release = ssh.add_subcommand(
        "release",
        "Destroy machines mlt rented, each confirmed gone with its marketplace (never one mlt did "
        "not rent)\n\nExamples:\n  mlt ssh release 7835610\n  mlt ssh release --all");
    release->set_help_flag("--help", "Print this help and exit");
    auto id = std::make_shared<std::string>();
    auto all = std::make_shared<bool>(false);
    release->add_option("ID", *id, "The instance, as mlt ssh instances lists it");
    release->add_flag("--all", *all, "Every machine mlt rented that still exists");
    release->callback([&action, &ssh, id, all] {
        reject_train_flags(ssh, "release");
        action = [id, all] { return run_release(*id, *all); };
    });
}

}  // namespace

std::shared_ptr<const SshCommandLine> add_ssh_command(CLI::App& app, Action& action, int& verbosity,
                                                      TrainRunner train) {
    auto* ssh =
        app.add_subcommand("ssh", "Train, inspect or stop a model on remote machines over SSH");
    ssh->formatter(help_formatter());  // before the subcommands, which inherit it
    // One COMMAND per call: a later word naming a command (train MODEL status) is an argument.
    ssh->require_subcommand(0, 1);
    // `-h` is the host, as in MLTK; help stays reachable as --help.
    ssh->set_help_flag("--help", "Print this help and exit");
    ssh->footer(
        "HOST is [user@]host[:port][/remote_dir] or a Host alias of ~/.ssh/config.\n"
        "Settings: the ssh: section of ~/.mltk/user_settings.yaml (or $MLTK_USER_SETTINGS_PATH)\n"
        "  and of MODEL.ssh.yaml beside the spec, and the spec's SshMixin values "
        "(docs/settings.md).\n"
        "Results of train: MODEL.mltk.zip beside the spec; logs, and the console log\n"
        "  mltk_ssh_train_MODEL.log, in ${MLTK_CACHE_DIR:-~/.mltk}/models/MODEL/.\n"
        "Examples:\n"
        "  mlt ssh -h root@ssh4.example.net -p 35023 -i ~/.ssh/id_vast status\n"
        "  mlt ssh -h gpu-box/~/workspace -o StrictHostKeyChecking=yes status my_model\n"
        "  mlt ssh -h gpu --clean --force train my_model   # train's flags may come first, as in "
        "MLTK\n" +
        exit_code_help());
    auto cli = std::make_shared<SshCommandLine>();
    add_connection_options(*ssh, *cli, "Options");
    add_verbose_flag(*ssh, verbosity, "More detail on stderr (-vv: libssh protocol trace)");
    // train first: the help and every list of commands name them in this order.
    add_ssh_job_commands(*ssh, action, cli, verbosity, std::move(train));

    add_optional_model_command(
        *ssh, action, cli, "status", "Show the remote job(s): running/finished/none",
        "Model name (its spec need not be on this machine) or spec path "
        "(default: all models)",
        "give the model's name or spec path, or leave it out for all models", run_status);
    add_optional_model_command(
        *ssh, action, cli, "doctor",
        "Check that the host has what train needs (tools, venv, GPU, disk, login shell, link), "
        "a line each, with what to do; exit 0 when train can run there, else 1\n\nExample:\n"
        "  mlt ssh -h root@ssh4.example.net -p 35023 -i ~/.ssh/id_vast doctor",
        "Model name or spec path whose settings to check with (remote_dir, create_venv; default: "
        "the user settings)",
        "give the model's name or spec path, or leave it out", run_doctor);
    auto* forward = ssh->add_subcommand(
        "forward",
        "Reach a port of the remote host here, over the SSH connection (as ssh -L), until "
        "Ctrl+C\n\nExample:\n  mlt ssh -h gpu forward 8888:8888   # a notebook on the "
        "remote's port 8888 at http://127.0.0.1:8888");
    forward->set_help_flag("--help", "Print this help and exit");
    auto ports = std::make_shared<std::string>();
    forward
        ->add_option("LOCAL:REMOTE", *ports,
                     "Local port (0: a free one) and the port on the remote's loopback")
        ->required();
    forward->callback([&action, ssh, cli, ports] {
        reject_train_flags(*ssh, "forward");
        action = [cli, ports] { return run_forward(*cli, *ports); };
    });
    add_rented_commands(*ssh, action);
    // Last: every command declared above gets them.
    accept_options_after_command(*ssh, *cli, verbosity);
    return cli;
}

}  // namespace mlt::cli
