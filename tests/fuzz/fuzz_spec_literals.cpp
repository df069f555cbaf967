// libFuzzer target: the SshMixin literals of a model spec (python_lexer, spec_literals_yaml),
// then read as settings the way load_settings does. spec_literals_yaml promises valid YAML for
// any input; that is checked too.

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "config/settings_reader.h"
#include "config/spec_literals.h"
#include "mlt/config/settings.h"
#include "mlt/util/error.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    spdlog::set_level(spdlog::level::off);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace mlt::settings_detail;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<mlt::SettingsWarning> warnings;
    const std::string yaml = spec_literals_yaml("spec.py", text, {}, &warnings);
    try {
        (void)YAML::Load(yaml);
    } catch (const YAML::Exception& e) {
        std::fprintf(stderr, "spec_literals_yaml gave invalid YAML (%s):\n%s\n", e.what(),
                     yaml.c_str());
        std::abort();
    }
    // A sidecar setting some keys leaves them out of the spec's layer.
    (void)spec_literals_yaml("spec.py", text, {"remote_dir", "upload_files"}, nullptr);
    try {
        SettingsLayer layer = read_settings_file("spec.py", yaml, &warnings);
        mlt::SshSettings settings;
        apply_layer(std::move(layer), settings);
    } catch (const mlt::Error&) {
        // A literal of the wrong type: the documented refusal.
    }
    return 0;
}
