#include "mlt/train/model.h"

#include <cstdlib>
#include <filesystem>

#include "mlt/job/status.h"
#include "mlt/util/error.h"
#include "mlt/util/paths.h"

namespace fs = std::filesystem;

namespace mlt {

namespace {

ModelRef from_path(const fs::path& path, const std::string& name) {
    ModelRef ref;
    std::error_code ec;
    fs::path abs = fs::absolute(path, ec);
    ref.spec_path = abs.lexically_normal().string();
    ref.spec_dir = abs.lexically_normal().parent_path().string();
    ref.spec_file = abs.filename().string();
    ref.name = name;
    validate_model_name(ref.name);
    return ref;
}

}  // namespace

bool is_spec_path(const std::string& arg) {
    return arg.find('/') != std::string::npos ||
           (arg.size() > 3 && arg.compare(arg.size() - 3, 3, ".py") == 0);
}

std::string model_name_of(const std::string& argument) {
    return is_spec_path(argument) ? fs::path(argument).stem().string() : argument;
}

ModelRef resolve_model(const std::string& argument, const std::vector<std::string>& model_paths) {
    if (argument.empty()) throw usage_error("no model given", "mlt ssh ... train MODEL");
    if (is_spec_path(argument)) {
        fs::path path = expand_user(argument);
        if (!fs::is_regular_file(path))
            throw usage_error("model specification " + argument + " not found",
                              "check the path, or give the model name");
        return from_path(path, path.stem().string());
    }

    std::vector<std::string> dirs{"."};
    for (const auto& d : model_paths) dirs.push_back(expand_user(d));
    if (const char* env = std::getenv("MLTK_MODEL_PATHS"); env && *env) {
        std::string all = env;
        for (size_t start = 0; start <= all.size();) {
            size_t colon = all.find(':', start);
            std::string d = all.substr(start, colon - start);
            if (!d.empty()) dirs.push_back(expand_user(d));
            if (colon == std::string::npos) break;
            start = colon + 1;
        }
    }
    // `name-test` trains spec name.py under the name name-test, unless name-test.py exists.
    std::vector<std::string> stems{argument};
    const std::string suffix = "-test";
    if (argument.size() > suffix.size() &&
        argument.compare(argument.size() - suffix.size(), suffix.size(), suffix) == 0)
        stems.push_back(argument.substr(0, argument.size() - suffix.size()));
    for (const auto& stem : stems)
        for (const auto& d : dirs) {
            fs::path candidate = fs::path(d) / (stem + ".py");
            if (fs::is_regular_file(candidate)) return from_path(candidate, argument);
        }
    std::string searched;
    for (const auto& d : dirs) searched += (searched.empty() ? "" : ", ") + d;
    throw usage_error("model '" + argument + "' not found (looked for " + argument + ".py in " +
                          searched + ")",
                      "give the spec path, or add its directory to ssh.model_paths or MLTK_MODEL_PATHS");
}

std::string local_log_dir(const std::string& model) { return mltk_dir() + "/models/" + model; }

}  // namespace mlt
