// The words of watch.on_failure's actions and the rules that apply by default.
#include "mlt/config/settings.h"

namespace mlt {

const char* failure_action_name(FailureAction action) {
    switch (action) {
        case FailureAction::no_restart:
            return "no_restart";
        case FailureAction::exclude_host:
            return "exclude_host";
        case FailureAction::restart:
            return "restart";
    }
    return "?";
}

// Failures that another start on the same host repeats (the model does not fit the GPU, the
// environment lacks a module, the code does not parse), and faults of the GPU itself, which
// another start on the same host meets again.
const std::vector<FailureRule>& default_failure_rules() {
    static const std::vector<FailureRule> kRules = {
        {"CUDA out of memory|OutOfMemoryError|ResourceExhaustedError|OOM when allocating",
         FailureAction::no_restart, true},
        {"ModuleNotFoundError|ImportError: |SyntaxError: ", FailureAction::no_restart, true},
        {"\\bXid\\b|[Uu]ncorrectable ECC|ECC error|fallen off the bus", FailureAction::exclude_host,
         true},
    };
    return kRules;
}

}  // namespace mlt
