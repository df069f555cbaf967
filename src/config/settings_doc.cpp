// docs/settings.md generated from the settings table.
#include <string>
#include <vector>

#include "mlt/config/settings.h"
#include "settings_table.h"

namespace mlt {

namespace {

using settings_detail::FieldDecl;

constexpr char kIntro[] = R"(# Settings reference

<!-- Generated from src/config/settings_table.cpp by settings_reference_markdown(); do not
edit. Regenerate with: MLT_UPDATE_DOCS=1 <build>/tests/mlt_unit_tests --gtest_filter='SettingsDoc.*' -->

`mlt ssh` reads the `ssh:` section of up to two YAML files, the same files and keys as
`mltk ssh` of Silicon Labs' MLTK, and the SshMixin settings a model specification assigns.

## Files

- **User settings**: `$MLTK_USER_SETTINGS_PATH`, else `~/.mltk/user_settings.yaml`. The other
  top-level keys of this file belong to MLTK and are ignored, except `model_paths`, which MLTK
  keeps at the top level: it is read as if it were `ssh.model_paths`.
- **Model settings**: `<spec stem>.ssh.yaml` next to the model specification, e.g.
  `models/my_model.ssh.yaml` for `models/my_model.py`. It has the same `ssh:` section.
- **The model specification** itself, for MLTK's SshMixin settings (see below).

A missing file, an empty file and an empty `ssh:` section are all fine.

## Precedence

From highest to lowest:

1. the command line (`-h user@host:port/dir`, `-p`, `-i`, `-o`, `--password`,
   `--reconnect-timeout`, `--workspace`, ...)
2. the ssh config (`config_path`, or `-F`) entry of the `-h` host, or of `connection.hostname`
   when there is no `-h`: `HostName`, `Port`, `User`, `IdentityFile`, `ConnectTimeout`,
   `StrictHostKeyChecking`, ... as `ssh` reads them (`Host` patterns match the name as
   written, so an alias such as `vast_ai` works although `_` is no host name character)
3. the model's `<spec stem>.ssh.yaml`
4. the SshMixin settings in the model specification
5. the user settings file
6. the defaults below

A key that `<spec stem>.ssh.yaml` sets takes the model specification's value out entirely,
for lists too: the model's layer is the sidecar's value where it sets the key, else the
specification's. The exception is `environment`, which merges per variable across every
layer (user settings, specification, sidecar), the higher layer winning.

## Merge rules

- Scalars (strings, numbers, booleans, `host_key_checking`): the higher layer replaces the lower.
- `environment`: merged per variable; the higher layer's value wins, and a variable keeps the
  position where it was first defined.
- `upload_files`, `download_files`, `startup_cmds`, `shutdown_cmds`, `model_paths`: the user
  list followed by the model's list (the top-level `model_paths` before `ssh.model_paths`), as
  MLTK combines them.
- `venv_packages`, `create_venv`: the higher layer replaces the lower; unset anywhere means
  the default (which depends on `train_cmd`).
- `connection`: the model's value replaces the user's as a whole.
- `notify`: the model's list replaces the user's as a whole (`notify: []` turns the user's
  targets off for one model).
- `nodes`, `transfer`: per key.
- A key without a value (`key:` or `key: null`) counts as not set; so does an empty string in
  `connection` (MLTK's `key_filename: ''`).
- A key given twice in one mapping: the later one wins, with a warning.

## Settings in the model spec (MLTK's SshMixin)

A model specification written for MLTK may set its SSH settings in Python:

```python
my_model.ssh_remote_dir = "workspace"
my_model.ssh_create_venv = True
my_model.ssh_environment = dict(CUDA_VISIBLE_DEVICES="-1")
my_model.ssh_startup_cmds = ["pip3 install tf_keras"]
```

How mlt reads them depends on `spec_loader` (set in the user settings or the sidecar):

- `auto` (the default): when `python3` on `PATH` can import `mltk` (an MLTK user has it),
  mlt loads the specification in a child process through MLTK's own loader
  (`mltk.core.load_mltk_model`, with `test` for a `-test` model), with the environment of the
  `mlt` command, and reads every `ssh_*` property of the loaded model, as `mltk ssh train`
  does. Computed values, control flow (`os.environ.get('TRAIN_TEACHER')`, ...) and test mode
  then behave exactly as in MLTK. A specification that fails to load stops the run before
  anything runs on the remote (exit status 2), with its error and its last lines of output
  (`train` connects while the spec loads, to save that time; nothing else happens there
  before the load has succeeded); one that has
  not loaded after 60 seconds is stopped (its whole process group) and named. `-v` shows
  everything it printed. Without a `python3` that can import `mltk`, mlt reads the literals
  as below.
- `mltk`: as `auto`, but a missing `python3` or `mltk` is an error.
- `literals`: never runs Python; mlt reads the literals as below.

Without MLTK, mlt reads the settings without running the specification: assignments
`<name>.ssh_<key> = <value>` of the seven SshMixin keys `ssh_remote_dir`, `ssh_create_venv`,
`ssh_environment`, `ssh_upload_files`, `ssh_download_files`, `ssh_startup_cmds` and
`ssh_shutdown_cmds`, each read as the `ssh:` key without the prefix. A value must be a Python
literal: strings (also `r''`, triple-quoted and adjacent ones joined), numbers, `True`,
`False`, `None` (not set), lists, tuples, `{...}` dicts and `dict(NAME=...)`, spanning lines
and with comments as Python allows. Of repeated assignments the last one counts. Types and
path rules are checked as for the YAML files, and errors name the specification's file and
line.

A value that is not a literal (a variable, a call, an f-string, `+`, `%`, `+=`, ...) is
ignored with a warning naming the line, which says how to get it exactly: install MLTK
locally, or set that key in `<spec stem>.ssh.yaml`, where it also takes precedence. A literal
inside an `if`/`else` (or `for`, `while`, `except`) branch, or inside a function the
specification calls at import, is applied with a warning naming the line, since mlt cannot
tell whether that code runs; one inside a function the specification never calls is ignored
with a warning. An assignment to another `ssh_` attribute gives a warning.

## Path rules

- `upload_files` / `download_files` entries without `|` are globs (`*`, `?`, `[...]`, and `**`
  for any depth) relative to the model spec's directory (upload) or the remote directory
  (download). They may not be absolute (start with `/` or `~`) nor contain `..`.
- An entry `<from>|<to>` copies one file or directory; either side may be absolute or start
  with `~`, and neither may contain a wildcard.
- Local paths (`config_path`, `model_paths`, `workspace`, `connection.key_filename`) may start
  with `~`; relative ones are relative to the current directory.
- Remote paths (`remote_dir`, `remote_log_dir`) may start with `~`; relative ones are relative
  to the login directory (`remote_log_dir`: to `remote_dir`).

## Errors and warnings

Malformed YAML, a value of the wrong type or a broken path rule stops `mlt` before anything
happens remotely (exit status 2) with `file:line:column` of the culprit; so does a NUL
character (`"\0"`) anywhere in a value. An unknown key inside `ssh:` only gives a warning
naming the file, line and key; so does a second YAML document (after a `---` line), which is
not read.

YAML merge keys work as in MLTK's PyYAML: `<<: *base` (or `<<: [*a, *b]`, the earlier one
winning) takes the keys of the mapping marked `&base`, and keys written beside it win:

```
gpu: &gpu {hostname: gpu.example.com, port: 2222, username: root}
ssh:
  connection: {<<: *gpu, port: 2200}
```

`environment` may not set mlt's own `MLT_*` variables (`MLT_MODEL`, `MLT_LOG_DIR`,
`MLT_ARCHIVE`, `MLT_SPEC`, ...): the job wrapper sets them, and they say which logs and
archive mlt pulls. Such an entry is left out with a warning naming the key and the file.

A wildcard or directory of `upload_files` (and a workspace) never sends the model's own
`<stem>.ssh.yaml` when it sets `connection.password`, `connection.passphrase` or a `notify`
URL; an entry that names the file sends it.

## Keys

| key | type | default | description |
|---|---|---|---|
)";

constexpr char kOutro[] = R"(
Placeholders in `train_cmd` and `remote_log_dir` are replaced before the command runs:
`{model}` the model name, `{spec}` the uploaded model specification, `{log_dir}` the remote
log directory, `{archive}` the remote model archive, `{remote_dir}` the remote working
directory.

## Example

)";

// Table cells may not contain a bare `|`, not even inside code spans.
std::string cell(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (c == '|') out += '\\';
        out += c;
    }
    return out;
}

void add_row(std::string& out, const std::string& key, const FieldDecl& field) {
    out += "| `" + key + "` | " + cell(settings_detail::type_name(field)) + " | " +
           cell(field.default_text) + " | " + cell(field.doc) + " |\n";
}

}  // namespace

std::string settings_reference_markdown() {
    std::string out = kIntro;
    for (const auto& field : settings_detail::ssh_fields()) {
        add_row(out, std::string(field.name), field);
        if (field.type == settings_detail::SettingType::connection) {
            for (const auto& sub : settings_detail::connection_fields())
                add_row(out, "connection." + std::string(sub.name), sub);
        }
        if (field.type == settings_detail::SettingType::nodes) {
            for (const auto& sub : settings_detail::nodes_fields())
                add_row(out, "nodes." + std::string(sub.name), sub);
        }
        if (field.type == settings_detail::SettingType::transfer) {
            for (const auto& sub : settings_detail::transfer_fields())
                add_row(out, "transfer." + std::string(sub.name), sub);
        }
        if (field.type == settings_detail::SettingType::checkpoints) {
            for (const auto& sub : settings_detail::checkpoints_fields())
                add_row(out, "checkpoints." + std::string(sub.name), sub);
            for (const auto& sub : settings_detail::keep_best_fields())
                add_row(out, "checkpoints.keep_best." + std::string(sub.name), sub);
        }
        if (field.type == settings_detail::SettingType::provider) {
            for (const auto& sub : settings_detail::provider_fields())
                add_row(out, "provider." + std::string(sub.name), sub);
        }
        if (field.type == settings_detail::SettingType::watch) {
            for (const auto& sub : settings_detail::watch_fields())
                add_row(out, "watch." + std::string(sub.name), sub);
        }
        if (field.type == settings_detail::SettingType::notify_targets) {
            for (const auto& sub : settings_detail::notify_target_fields())
                add_row(out, "notify[]." + std::string(sub.name), sub);
        }
    }
    out += "\nMLTK hands `connection` to paramiko's `SSHClient.connect`; its other arguments (";
    const auto& ignored = settings_detail::ignored_connection_keys();
    for (size_t i = 0; i < ignored.size(); ++i)
        out += (i ? ", `" : "`") + std::string(ignored[i]) + "`";
    out += ") are accepted there and ignored, with one warning each.\n";
    out += kOutro;
    // Built from the same examples the error hints use, so a unit test that loads this
    // block also checks every hint.
    out += "```yaml\nssh:\n";
    for (const auto& field : settings_detail::ssh_fields())
        out += "  " + std::string(field.name) + ": " + std::string(field.example) + "\n";
    out += "```\n";
    return out;
}

}  // namespace mlt
