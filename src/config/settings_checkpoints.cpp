// `checkpoints:`: the rows of the mapping and of its keep_best, their reading and checks, and
// how a layer's mapping applies (it replaces a lower one's whole).
#include <string>
#include <utility>

#include "mlt/config/stop_rule_spec.h"
#include "mlt/util/error.h"
#include "settings_rows.h"
#include "settings_values.h"

namespace mlt::settings_detail {

using namespace rows;

void merge_checkpoints(Value&& value, SshSettings& settings) {
    settings.checkpoints = std::get<CheckpointSettings>(std::move(value));
}

const std::vector<FieldDecl>& checkpoints_fields() {
    static const std::vector<FieldDecl> kFields = [] {
        FieldDecl pattern = text("pattern", "none", "'checkpoints/*.pt'",
                                 "the checkpoints: a glob relative to the log dir (`*` also "
                                 "crosses `/`)",
                                 nullptr);
        pattern.non_empty = true;
        return std::vector<FieldDecl>{
            pattern,
            integer("keep_last", "`0`", "2",
                    "the newest N checkpoints stay on both ends; with `keep_best` 0 and this 0 "
                    "nothing is deleted",
                    0, 100000, nullptr),
            special("keep_best", SettingType::keep_best, "none",
                    "{metric: 'val_loss[=:] *([0-9.eE+-]+)', mode: min, n: 1}",
                    "the best K by a metric stay too: `metric` a regex with a group around the "
                    "value, the last one the console showed when the host's guard first saw "
                    "the checkpoint (it looks every 2 s; or in `file`, a file of the log dir), "
                    "`mode` min|max, `n` K",
                    nullptr),
            integer("settle_seconds", "`10`", "10",
                    "a checkpoint is whole when its size and mtime stayed the same this long "
                    "while the job ran (or its `marker` exists, or the job ended after it)",
                    1, 86400, nullptr),
            text("marker", "none", "'{name}.done'",
                 "a file beside a checkpoint that says it is whole; `{name}` is the "
                 "checkpoint's file name",
                 nullptr),
        };
    }();
    return kFields;
}

const std::vector<FieldDecl>& keep_best_fields() {
    static const std::vector<FieldDecl> kFields = [] {
        FieldDecl metric = text("metric", "none", "'val_loss[=:] *([0-9.eE+-]+)'",
                                "the metric's regex, with a group around the value", nullptr);
        metric.non_empty = true;
        return std::vector<FieldDecl>{
            metric,
            choice("mode", {"min", "max"}, "`min`", "min", "whether lower or higher is better",
                   nullptr),
            integer("n", "`1`", "1", "how many of the best stay", 1, 1000, nullptr),
            text("file", "none", "'metrics.csv'",
                 "the file of the log dir the metric's lines are in; none: the console log",
                 nullptr),
        };
    }();
    return kFields;
}

namespace {

// A path inside the log dir: relative, without a `..` part.
bool inside(const std::string& path) {
    if (path.empty() || path[0] == '/') return false;
    size_t i = 0;
    while (i <= path.size()) {
        const size_t j = std::min(path.find('/', i), path.size());
        if (path.compare(i, j - i, "..") == 0 && j - i == 2) return false;
        i = j + 1;
    }
    return true;
}

}  // namespace

CheckpointSettings ValueReader::read_checkpoints(const YAML::Node& node,
                                                 const std::string& key) const {
    CheckpointSettings out;
    each_known(node, key, checkpoints_fields(),
               [&](const std::string& name, const FieldDecl& field, const YAML::Node& v) {
                   if (name == "keep_best") {
                       read_keep_best(v, key + ".keep_best", out);
                       return;
                   }
                   const Value value = read(field, v, key + "." + name);
                   const auto bad = [&](const std::string& why, const std::string& hint) {
                       throw config_error(yaml_.where(v) + ": " + key + "." + name + " " + why,
                                          hint);
                   };
                   const auto& text = std::get_if<std::string>(&value);
                   if (text && text->find_first_of("\n\r\t") != std::string::npos)
                       bad("has a line end or a tab", "write it on one line");
                   if (name == "pattern") {
                       out.pattern = std::get<std::string>(value);
                       if (!inside(out.pattern))
                           bad("must stay inside the log dir (relative, no '..')",
                               "e.g. pattern: 'checkpoints/*.pt'");
                   } else if (name == "keep_last") {
                       out.keep_last = std::get<int>(value);
                   } else if (name == "settle_seconds") {
                       out.settle_seconds = std::get<int>(value);
                   } else {
                       out.marker = std::get<std::string>(value);
                       if (out.marker.find("{name}") == std::string::npos ||
                           out.marker.find('/') != std::string::npos)
                           bad("must name a file beside the checkpoint with {name} in it",
                               "e.g. marker: '{name}.done'");
                   }
               });
    if (out.pattern.empty())
        throw config_error(yaml_.where(node) + ": " + key + " has no pattern",
                           "e.g. checkpoints: {pattern: 'checkpoints/*.pt', keep_last: 2}");
    return out;
}

void ValueReader::read_keep_best(const YAML::Node& node, const std::string& key,
                                 CheckpointSettings& out) const {
    if (!node.IsMap())
        throw config_error(
            yaml_.where(node) + ": " + key +
                " must be a mapping (metric, mode, n, "
                "file)",
            "e.g. keep_best: {metric: 'val_loss[=:] *([0-9.eE+-]+)', mode: min, n: 1}");
    out.best_n = 1;
    std::optional<YAML::Node> metric;
    each_known(node, key, keep_best_fields(),
               [&](const std::string& name, const FieldDecl& field, const YAML::Node& v) {
                   const Value value = read(field, v, key + "." + name);
                   if (name == "metric") {
                       out.best_metric = std::get<std::string>(value);
                       metric.emplace(v);
                   } else if (name == "mode") {
                       out.best_max = std::get<std::string>(value) == "max";
                   } else if (name == "n") {
                       out.best_n = std::get<int>(value);
                   } else {
                       out.best_file = std::get<std::string>(value);
                       if (!inside(out.best_file) ||
                           out.best_file.find_first_of("\n\r\t") != std::string::npos)
                           throw config_error(
                               yaml_.where(v) + ": " + key + ".file must stay inside the log dir",
                               "e.g. file: 'metrics.csv'");
                   }
               });
    if (!metric)
        throw config_error(yaml_.where(node) + ": " + key + " has no metric",
                           "e.g. keep_best: {metric: 'val_loss[=:] *([0-9.eE+-]+)', n: 1}");
    // The host finds the value as a plateau rule's (the guard's awk, its dialect).
    StopRule rule;
    rule.regex = out.best_metric;
    rule.plateau = true;
    if (auto error = rule_error(rule))
        throw config_error(
            yaml_.where(*metric) + ": " + key + ".metric is no usable metric: " + error->why,
            "see docs/usage.md, \"Watching a run\", for the regexes the host reads");
}

}  // namespace mlt::settings_detail
