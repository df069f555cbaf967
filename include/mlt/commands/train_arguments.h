#pragma once

#include <string>
#include <vector>

#include "mlt/train/cost/run_ledger.h"

namespace mlt {

// One option of mlt that may appear among the words after `train`: its names as typed
// (`--clean`, `-h`) and whether it takes a value (`-h HOST`, `--workspace=DIR`).
struct OwnOption {
    std::vector<std::string> names;
    bool takes_value = false;
};

// The words after `train`, split as MLTK's click command splits them.
struct TrainArguments {
    std::string model;                // the first word that is neither an option nor its value
    std::vector<std::string> own;     // mlt's options, each with its value, in the order given
    std::vector<std::string> passed;  // everything else, in the order given, for the training
};

// Splits `words` (everything after `train`): an option of `own_options` is mlt's wherever it
// stands, with the next word as its value when it takes one and has no `=value`/`-pVALUE`;
// the first other plain word is MODEL; all else goes to the training in its order. After
// `--` (dropped) every word goes to the training (or is MODEL when none came yet).
// Throws mlt::Error (usage) for an unknown option before MODEL (its value could not be told
// from MODEL), for a `--name` before `--` that is a typo of a long option of `own_options`
// (1 edit for names of 5 to 7 characters, 2 for longer ones; "did you mean"), and when there
// is no MODEL.
TrainArguments split_train_arguments(const std::vector<std::string>& words,
                                     const std::vector<OwnOption>& own_options);

// Refuses --resume together with --force (mlt::Error usage): --resume continues the run the
// remote holds, --force discards it.
void check_job_flags(bool resume, bool force);

// Refuses (mlt::Error usage) --max-cost when no price is known (`price_per_hour` 0: it could
// never be reached); warns that a limit is not kept when mlt does not wait for the nodes of a
// gang (`detached_gang`: one node's limit is kept by the guard on its host).
void check_budget_flags(double price_per_hour, const Budget& budget);

// True when the training arguments ask for MLTK's test model (`--test`).
bool wants_test_model(const std::vector<std::string>& passed);

}  // namespace mlt
