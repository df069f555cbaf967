// Loading the settings: the layers (user settings, the spec's SshMixin values, the sidecar)
// found, read and merged; the settings paths and small helpers of SshSettings.
#include "mlt/config/settings.h"

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mlt/config/spec_options.h"
#include "mlt/util/error.h"
#include "mlt/util/paths.h"
#include "settings_reader.h"
#include "spec_literals.h"
#include "spec_loader.h"

namespace mlt {

std::optional<HostKeyChecking> parse_host_key_checking(std::string_view text) {
    std::string word;
    for (char c : text) word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (word == "yes" || word == "true") return HostKeyChecking::yes;
    if (word == "accept-new") return HostKeyChecking::accept_new;
    if (word == "no" || word == "false" || word == "off") return HostKeyChecking::no;
    return std::nullopt;
}

bool is_mltk_train_cmd(const std::string& train_cmd) {
    size_t start = train_cmd.find_first_not_of(" \t");
    if (start == std::string::npos) return false;
    return train_cmd.compare(start, 10, "mltk train") == 0 &&
           (train_cmd.size() == start + 10 || train_cmd[start + 10] == ' ');
}

bool effective_create_venv(const SshSettings& settings) {
    return settings.create_venv.value_or(is_mltk_train_cmd(settings.train_cmd));
}

std::string default_user_settings_path() {
    if (const char* p = std::getenv("MLTK_USER_SETTINGS_PATH"); p && *p) {
        // Named on purpose: a typo must not quietly train with other settings.
        std::string path = expand_user(p);
        std::error_code ec;
        if (!std::filesystem::exists(path, ec))
            throw config_error("MLTK_USER_SETTINGS_PATH names " + path + ", which does not exist",
                               "create the file, or unset MLTK_USER_SETTINGS_PATH to use "
                               "~/.mltk/user_settings.yaml");
        return path;
    }
    // MLTK looks here regardless of MLTK_CACHE_DIR, so the same file keeps working.
    return home_dir() + "/.mltk/user_settings.yaml";
}

std::string model_settings_path_for(const std::string& spec_path) {
    std::filesystem::path spec(spec_path);
    std::filesystem::path stem = spec.stem();
    return (spec.parent_path() / stem).string() + ".ssh.yaml";
}

namespace {

struct SourceFile {
    std::string path;  // `~` expanded
    std::string text;
};

// The contents of `path`, or nothing when the path is empty or the file does not exist.
std::optional<SourceFile> read_if_present(const std::string& path, const char* expected) {
    if (path.empty()) return std::nullopt;
    std::string file = expand_user(path);
    std::error_code ec;
    auto status = std::filesystem::status(file, ec);
    if (status.type() == std::filesystem::file_type::not_found) return std::nullopt;
    if (ec) throw io_error("cannot read " + file + ": " + ec.message());
    if (!std::filesystem::is_regular_file(status))
        throw config_error(file + " is not a regular file", expected);
    return SourceFile{file, read_file(file)};
}

// `spec_loader` as the sidecar, else the user settings, else the default set it.
std::string spec_loader_of(const settings_detail::SettingsLayer& user,
                           const settings_detail::SettingsLayer& sidecar) {
    std::string mode = "auto";
    for (const auto* layer : {&user, &sidecar})
        for (const auto& [field, value] : layer->values)
            if (field->name == "spec_loader") mode = std::get<std::string>(value);
    return mode;
}

// The spec's layer: through the local MLTK (spec_loader auto or mltk), else its literals.
settings_detail::SettingsLayer read_spec_layer(const SourceFile& f, const std::string& mode,
                                               const SpecOptions& options,
                                               const std::set<std::string>& replaced,
                                               std::vector<SettingsWarning>* warnings) {
    using namespace settings_detail;
    if (mode != "literals" && options.may_run_python) {
        SpecLoad load{f.path, options.python, mode == "mltk", options.test, options.load_timeout};
        try {
            if (auto yaml = mltk_spec_yaml(load, replaced, warnings, options.ahead.get()))
                return read_settings_file(f.path + " (as MLTK loaded it)", *yaml, warnings);
        } catch (const Error& e) {
            if (!options.literals_when_load_fails) throw;
            spdlog::warn(
                "{}; reading the spec's literal values instead (a job already there is "
                "acted on as they say)",
                e.what());
        }
    }
    std::string yaml = spec_literals_yaml(f.path, f.text, replaced, warnings);
    // The YAML keeps the spec's line numbers, so messages name the spec.
    return read_settings_file(f.path, yaml, warnings);
}

}  // namespace

std::shared_ptr<SpecLoadAhead> start_spec_load_ahead(const SettingsSources& sources,
                                                     const SpecOptions& options) {
    using namespace settings_detail;
    if (!options.may_run_python) return nullptr;
    try {
        const auto spec = read_if_present(sources.spec_path, "");
        if (!spec) return nullptr;
        SettingsLayer user, sidecar;
        if (auto f = read_if_present(sources.user_settings_path, ""))
            user = read_settings_file(f->path, f->text, nullptr);
        if (auto f = read_if_present(sources.model_settings_path, ""))
            sidecar = read_settings_file(f->path, f->text, nullptr);
        const std::string mode = spec_loader_of(user, sidecar);
        if (mode == "literals") return nullptr;
        return std::make_shared<SpecLoadAhead>(SpecLoad{spec->path, options.python, mode == "mltk",
                                                        options.test, options.load_timeout});
    } catch (const Error&) {
        return nullptr;
    }
}

bool settings_file_holds_secret(const std::string& path) {
    try {
        const auto f = read_if_present(path, "");
        if (!f) return false;
        for (const auto& [field, value] :
             settings_detail::read_settings_file(f->path, f->text, nullptr).values) {
            if (const auto* list = std::get_if<std::vector<ConnectionSettings>>(&value))
                for (const auto& c : *list)
                    if (c.password || c.passphrase) return true;
            if (const auto* targets = std::get_if<std::vector<NotifyTarget>>(&value))
                if (!targets->empty()) return true;
        }
        return false;
    } catch (const Error&) {
        return true;
    }
}

SshSettings load_settings(const SettingsSources& sources, std::vector<SettingsWarning>* warnings) {
    SpecOptions literals_only;
    literals_only.may_run_python = false;
    return load_settings(sources, literals_only, warnings);
}

SshSettings load_settings(const SettingsSources& sources, const SpecOptions& options,
                          std::vector<SettingsWarning>* warnings) {
    using namespace settings_detail;
    const char* yaml_file = "the settings file must be a YAML file";
    SettingsLayer user;
    if (auto f = read_if_present(sources.user_settings_path, yaml_file))
        user = read_settings_file(f->path, f->text, warnings);
    // The sidecar is read before the spec because every key it sets replaces the spec's
    // value as a whole (lists too), except `environment`, which merges per variable in every
    // layer; the sidecar's warnings still come after the spec's.
    SettingsLayer sidecar;
    std::vector<SettingsWarning> sidecar_warnings;
    if (auto f = read_if_present(sources.model_settings_path, yaml_file))
        sidecar = read_settings_file(f->path, f->text, warnings ? &sidecar_warnings : nullptr);
    SettingsLayer spec;
    if (auto f = read_if_present(sources.spec_path, "the model specification must be a .py file")) {
        std::set<std::string> replaced = keys_of(sidecar);
        replaced.erase("environment");
        spec = read_spec_layer(*f, spec_loader_of(user, sidecar), options, replaced, warnings);
    }
    if (warnings)
        warnings->insert(warnings->end(), sidecar_warnings.begin(), sidecar_warnings.end());

    // Lowest layer first: each is applied on top of what the previous ones gave.
    SshSettings settings;
    for (SettingsLayer* layer : {&user, &spec, &sidecar}) apply_layer(std::move(*layer), settings);
    return settings;
}

}  // namespace mlt
