// The rows of the `watch` mapping and of a plateau rule in its stop_when, and how a layer's
// watch applies.
#include "settings_rows.h"

namespace mlt::settings_detail {

using namespace rows;

// A layer's rules come after the lower layers' (the user's, then the model's).
void merge_watch(Value&& value, SshSettings& settings) {
    auto& watch = std::get<WatchValue>(value);
    if (watch.every) settings.watch_every = *watch.every;
    if (watch.idle_gpu_minutes) settings.idle_gpu_minutes = *watch.idle_gpu_minutes;
    if (watch.stop_idle) settings.stop_idle = *watch.stop_idle;
    if (watch.silent_minutes) settings.silent_minutes = *watch.silent_minutes;
    if (watch.stop_silent) settings.stop_silent = *watch.stop_silent;
    if (watch.stop_when)
        settings.stop_when.insert(settings.stop_when.end(), watch.stop_when->begin(),
                                  watch.stop_when->end());
    // The first rule that matches decides: the model's come before the user's.
    if (watch.on_failure)
        settings.on_failure.insert(settings.on_failure.begin(), watch.on_failure->begin(),
                                   watch.on_failure->end());
    if (watch.on_failure_defaults) settings.on_failure_defaults = *watch.on_failure_defaults;
}

const std::vector<FieldDecl>& watch_fields() {
    static const std::vector<FieldDecl> kFields = {
        integer("every", "`15`", "30",
                "seconds between samples of the host while the job is followed (GPU use and "
                "memory from `nvidia-smi` when the host has it, load, free disk), taken by the "
                "log follow's own command: a status line on a terminal, `mlt-metrics.jsonl` in "
                "the local log dir, mean and peak GPU use in the summary; 0: no samples",
                0, 3600, nullptr),
        number("idle_gpu_minutes", "`0`", "10",
               "when every GPU stays under 10 % this many minutes while the job runs, the guard "
               "on the host says so once in the console log (and stops the job with "
               "`stop_idle`), with or without an mlt attached; 0: off",
               0, 100000, nullptr),
        flag("stop_idle", "`false`", "true",
             "with `idle_gpu_minutes`: stop the job as a limit (collected, `shutdown_cmds` "
             "run, exit 5)",
             nullptr),
        number("silent_minutes", "`0`", "30",
               "when the job's console log gets no new output for this many minutes (a hung "
               "job: a stuck collective, a dead dataloader), the guard on the host says so in "
               "the console log (and stops the job with `stop_silent`), whether or not mlt is "
               "attached; 0: off",
               0, 100000, nullptr),
        flag("stop_silent", "`false`", "true",
             "with `silent_minutes`: the guard stops the job as a limit (collected, "
             "`shutdown_cmds` run, exit 5)",
             nullptr),
        special("stop_when", SettingType::stop_rules, "`[]`",
                "['loss[=:] *nan', {metric: 'val_loss[=:] *([0-9.eE+-]+)', mode: min, "
                "patience: 5}]",
                "early-stop rules on the job's console lines: a regex (ECMAScript, found "
                "anywhere in a line), or a plateau rule `{metric: REGEX with a group around the "
                "value, mode: min|max (default min), patience: N (default 5)}` that fires after N "
                "values without a new best; the first rule that fires stops the job, which is "
                "still collected, and mlt exits 6; the user's rules come first, then the model's",
                nullptr),
        special("on_failure", SettingType::failure_rules, "`[]`",
                "[{match: 'CUDA out of memory', then: no_restart}, {match: 'Xid|uncorrectable "
                "ECC', then: exclude_host}]",
                "what a failed or lost attempt means, by its last 50 console lines: the first "
                "rule whose `match` (ECMAScript regex) is found in one of them decides: "
                "`no_restart` ends the run now, `exclude_host` leaves the host for a standby one "
                "(fallback_hosts, provision_cmd) and marks it bad for 24 h, `restart` starts the "
                "job again in place (counted in `max_restarts`; with 0, once); the model's rules "
                "come first, then the user's, then the defaults (docs/usage.md, \"When an "
                "attempt fails\")",
                nullptr),
        flag("on_failure_defaults", "`true`", "false",
             "after the `on_failure` rules, the defaults: out of memory on the GPU and a missing "
             "module or a syntax error end a run whose job failed by itself (`no_restart`; a "
             "loss is not judged by them), a GPU fault (`Xid`, an uncorrectable ECC error, a "
             "GPU fallen off the bus) leaves the host (`exclude_host`); false: none of them",
             nullptr),
    };
    return kFields;
}

const std::vector<FieldDecl>& failure_rule_fields() {
    static const std::vector<FieldDecl> kFields = [] {
        FieldDecl match =
            text("match", "none", "'CUDA out of memory'",
                 "the regex (ECMAScript) searched in each of the last lines", nullptr);
        match.non_empty = true;
        return std::vector<FieldDecl>{
            match,
            choice("then", {"no_restart", "exclude_host", "restart"}, "none", "no_restart",
                   "what the run does", nullptr),
        };
    }();
    return kFields;
}

const std::vector<FieldDecl>& plateau_fields() {
    static const std::vector<FieldDecl> kFields = [] {
        FieldDecl metric = text("metric", "none", "'val_loss[=:] *([0-9.eE+-]+)'",
                                "the metric's regex, with a group around the value", nullptr);
        metric.non_empty = true;
        return std::vector<FieldDecl>{
            metric,
            choice("mode", {"min", "max"}, "`min`", "max", "whether lower or higher is better",
                   nullptr),
            integer("patience", "`5`", "5", "values in a row without a new best that fire it", 1,
                    1000000, nullptr),
        };
    }();
    return kFields;
}

}  // namespace mlt::settings_detail
