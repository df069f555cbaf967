#pragma once

#include <string>
#include <vector>

namespace mlt {

// A model to train: its name and its specification file.
struct ModelRef {
    std::string name;       // e.g. my_model or my_model-test
    std::string spec_path;  // absolute path of the .py spec; the three are empty when the spec
    std::string spec_dir;   // is not here (resolve_model's spec_optional)
    std::string spec_file;  // its file name
};

// One place where NAME.py is looked for.
struct ModelSearchDir {
    std::string path;        // absolute
    bool recursive = false;  // its subdirectories too
};

// Where a model NAME is looked for, in MLTK's order: each of `model_paths` (with its
// subdirectories), then the current directory (only itself), then each `:`-separated entry
// of $MLTK_MODEL_PATHS (with its subdirectories). Duplicates are dropped; an entry naming
// the current directory is not searched recursively either (as MLTK). Never throws.
std::vector<ModelSearchDir> model_search_dirs(const std::vector<std::string>& model_paths);

// Resolves a MODEL argument (docs/usage.md): a path to a spec file, or NAME found as
// NAME.py in model_search_dirs(). `NAME-test`, or `test` (MLTK's `--test`), trains the spec
// NAME.py under the name NAME-test (never NAME-test-test). Throws mlt::Error (usage) for a
// missing spec path, or for a NAME not found, listing the places searched; with
// `spec_optional`, a NAME not found gives a ModelRef with only `name` set (a spec path must
// still exist). A name with shell metacharacters or path parts is an error either way.
ModelRef resolve_model(const std::string& argument, const std::vector<std::string>& model_paths,
                       bool test = false, bool spec_optional = false);

// True when a MODEL argument is a spec path (has a `/` or ends in `.py`), not a name.
bool is_spec_path(const std::string& argument);

// The NAME of every NAME.py in model_search_dirs(model_paths) (below the recursive ones too,
// within resolve_model's bounds) that is a valid model name, sorted, without duplicates: the
// names MODEL finds. Never throws; an unreadable directory is left out.
std::vector<std::string> model_names(const std::vector<std::string>& model_paths);

// `$MLTK_CACHE_DIR|~/.mltk` + `/models/<model>`: where logs land locally.
std::string local_log_dir(const std::string& model);

}  // namespace mlt
