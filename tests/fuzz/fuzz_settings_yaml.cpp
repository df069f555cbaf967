// libFuzzer target: one settings file (user_settings.yaml or <spec>.ssh.yaml) read and merged
// as load_settings does (read_settings_file, apply_layer).

#include <spdlog/spdlog.h>

#include <cstdint>
#include <string>
#include <vector>

#include "config/settings_reader.h"
#include "mlt/config/settings.h"
#include "mlt/util/error.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    spdlog::set_level(spdlog::level::off);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace mlt::settings_detail;
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<mlt::SettingsWarning> warnings;
    try {
        SettingsLayer layer = read_settings_file("user_settings.yaml", text, &warnings);
        (void)keys_of(layer);
        mlt::SshSettings settings;
        apply_layer(std::move(layer), settings);
        (void)mlt::effective_create_venv(settings);
    } catch (const mlt::Error&) {
        // Malformed YAML, a wrong type or a broken path rule: the documented refusal.
    }
    return 0;
}
