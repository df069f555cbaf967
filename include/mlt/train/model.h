#pragma once

#include <string>
#include <vector>

namespace mlt {

// A model to train: its name and its specification file.
struct ModelRef {
    std::string name;       // e.g. my_model or my_model-test
    std::string spec_path;  // absolute path of the .py spec
    std::string spec_dir;   // its directory
    std::string spec_file;  // its file name
};

// Resolves a MODEL argument (docs/usage.md): a path to a spec file, or NAME resolved
// as NAME.py in the current directory, then in `model_paths` and $MLTK_MODEL_PATHS; a
// `-test` suffix uses spec NAME.py with model name NAME-test. Throws mlt::Error (usage)
// listing the places searched.
ModelRef resolve_model(const std::string& argument, const std::vector<std::string>& model_paths);

// True when a MODEL argument is a spec path (has a `/` or ends in `.py`), not a name.
bool is_spec_path(const std::string& argument);

// The model name a MODEL argument stands for without looking for its spec: a path's stem,
// or the name itself.
std::string model_name_of(const std::string& argument);

// `$MLTK_CACHE_DIR|~/.mltk` + `/models/<model>`: where logs land locally.
std::string local_log_dir(const std::string& model);

}  // namespace mlt
