#pragma once
// The machines mlt rented (docs/providers.md, "What mlt rented"): `<mltk dir>/ssh/
// instances.jsonl`, one JSON object a line, appended as each changes (created, stopped, kept,
// destroyed). mlt touches only instances named here: `instances` lists them, `release`
// removes them, and a --resume finds the run's own.

#include <optional>
#include <string>
#include <vector>

namespace mlt {

// One instance as its newest record has it.
struct RentedInstance {
    std::string provider;  // "vast", "runpod"
    std::string id;
    std::string run_id, model, label;
    std::string state;  // created, stopped, kept, destroyed
    double since = 0;   // epoch seconds of its first record (created)
    double at = 0;      // of its newest record
    std::optional<double> price_per_hour;
    // Of several nodes: the rank it was rented for (0 alone); -1: a replacement after a
    // node was lost (the run's history says which rank it took).
    int rank = 0;
};

// `<mltk dir>/ssh/instances.jsonl`.
std::string rented_instances_path();

// Appends the record of `inst` (its state now, at `inst.at`) in one write(2) with O_APPEND
// (two mlt never interleave a line), never through a symlink, the file 0600. Throws
// mlt::Error (io) when it cannot: an instance that bills must not go unrecorded.
void record_rented_instance(const std::string& path, const RentedInstance& inst);

// Records `inst` in rented_instances_path() as `state` now (record_rented_instance).
void record_rented_state(RentedInstance inst, const std::string& state);

// Every instance recorded in `path`, each as its newest record has it (in the order of their
// first records); `destroyed` ones included only with `with_destroyed`. A missing file is
// none; a line that is no record is skipped.
std::vector<RentedInstance> read_rented_instances(const std::string& path, bool with_destroyed);

}  // namespace mlt
