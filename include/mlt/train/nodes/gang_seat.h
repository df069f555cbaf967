#pragma once
// GangSeat: the place of one node's run in a multi-node run (none for a run of one node).

#include "mlt/train/nodes/gang.h"

namespace mlt {

struct GangSeat {
    Gang* gang = nullptr;  // the nodes of a multi-node run, when this is one
    int rank = 0;
    enum class Role {
        first_attempt,  // the gang's run as it started
        new_attempt,    // continue_gang(): a new attempt of every node together
        settling,       // settle_for_restart(): it only settles what its job left
    } role = Role::first_attempt;
    // The gang stop stopped this node's job (another node failed).
    enum class Stop { none, for_another_node } stop = Stop::none;
    // This node's run failed with an error of its own: it never holds its shutdown_cmds.
    bool own_error = false;

    explicit operator bool() const { return gang != nullptr; }
    // Waits until every node of the gang is set up; throws once one failed.
    void wait_for_all() const;
    // Whether this node leaves its shutdown_cmds to the gang's next attempt: the gang failed
    // and restarts (Gang::holds_shutdown). Throws once a signal arrives.
    bool holds_shutdown() const;
};

}  // namespace mlt
