// The rows of the `ssh:` keys that say where and how the remote side runs (host, directory,
// venv, environment) and what a run transfers and runs.
#include <utility>

#include "settings_rows.h"

namespace mlt::settings_detail {

using namespace rows;

namespace {

// `environment`: per variable, the higher layer wins; a variable keeps the position where
// it was first seen so the exported order is stable across layers.
void merge_environment(Value&& value, SshSettings& settings) {
    for (auto& [name, text] : std::get<EnvironmentList>(value)) {
        bool replaced = false;
        for (auto& entry : settings.environment) {
            if (entry.first == name) {
                entry.second = text;
                replaced = true;
            }
        }
        if (!replaced) settings.environment.emplace_back(name, text);
    }
}

}  // namespace

// Where and how the remote side runs: host, directory, venv, environment.
std::vector<FieldDecl> remote_setup_fields() {
    using S = SshSettings;
    return {
        text("config_path", "`~/.ssh/config`", "~/.ssh/config",
             "OpenSSH client config whose `Host` entries `-h` aliases are looked up in",
             &assign<&S::config_path>),
        text("remote_dir", "`.`", "~/workspace",
             "remote working directory; relative to the login directory unless absolute or `~`",
             &assign<&S::remote_dir>, true),
        flag("create_venv", "`true` when train_cmd is `mltk train ...`, else `false`", "true",
             "create (once) and activate the Python venv `<remote_dir>/.venv` for the user's "
             "commands, as MLTK does",
             &assign_set<&S::create_venv>),
        special("venv_packages", SettingType::string_list, "`wheel silabs-mltk`",
                "[wheel, silabs-mltk]",
                "packages pip-installed into a newly created venv; unset: `wheel silabs-mltk`, "
                "pinned to the local MLTK's version when `python3 -c 'import mltk'` works here "
                "(latest if that version does not install); `[]`: nothing",
                &assign_set<&S::venv_packages>),
        special(
            "connection", SettingType::connection, "none",
            "{hostname: gpu.example.com, port: 22, username: root, key_filename: ~/.ssh/id_gpu}",
            "the host to train on (a list of mappings: one per node); `-h` overrides it",
            &assign<&S::connections>),
        special("environment", SettingType::environment, "`{}`",
                "[CUDA_VISIBLE_DEVICES=0, \"RUN_NAME=first try\"]",
                "variables exported before every remote command: `[NAME=VALUE, ...]` or a mapping",
                &merge_environment),
    };
}

// What a run transfers and runs, in the order of a run.
std::vector<FieldDecl> training_fields() {
    using S = SshSettings;
    return {
        list("upload_files", "[dataset/*.csv, \"~/patch.txt|./patch.txt\"]",
             "files uploaded before training: globs relative to the spec dir (a wildcard "
             "skips secrets and links out of the dir, as a workspace), or `from|to`",
             &append<&S::upload_files>, TransferDirection::upload),
        list(
            "startup_cmds", "[pip install wheel silabs-mltk]",
            "shell commands run in the remote dir before training; the first failure stops the run",
            &append<&S::startup_cmds>),
        list("download_files", "[results/**, \"./out.txt|~/out.txt\"]",
             "files downloaded after training: globs relative to the remote dir, or `from|to`",
             &append<&S::download_files>, TransferDirection::download),
        list("shutdown_cmds", "[echo done]",
             "shell commands run after training, also after a failure or Ctrl+C",
             &append<&S::shutdown_cmds>),
        number("unattended_shutdown_minutes", "`0`", "15",
               "when the job has ended and no mlt has collected it within this many minutes "
               "(`--no-wait`, a closed laptop), the guard on the host runs `shutdown_cmds` "
               "itself, once; the results stay on the host for a later `--resume`; 0: only an "
               "mlt runs them (MLTK's way)",
               0, 100000, &assign<&S::unattended_shutdown_minutes>),
        text("train_cmd", "`mltk train {model}`", "\"python train.py --log-dir {log_dir}\"",
             "training command; placeholders `{model}` `{spec}` `{log_dir}` `{archive}` "
             "`{remote_dir}`; train ARGS are appended",
             &assign<&S::train_cmd>, true),
        text("remote_log_dir", "where the remote MLTK puts it", "\"~/runs/{model}\"",
             "remote log dir collected into the local log dir; placeholders `{model}` "
             "`{remote_dir}`. Unset: for `mltk train`, the remote MLTK's log dir of the model "
             "(it honours the remote `MLTK_CACHE_DIR`); otherwise "
             "`${MLTK_CACHE_DIR:-~/.mltk}/models/<model>` on the remote",
             &assign<&S::remote_log_dir>, true),
        list("model_paths", "[~/models]",
             "local directories searched, with their subdirectories, for `MODEL.py` (before the "
             "current directory)",
             &append<&S::model_paths>),
    };
}

}  // namespace mlt::settings_detail
