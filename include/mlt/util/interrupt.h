#pragma once

namespace mlt {

// Installs the SIGINT/SIGTERM handler that counts interrupts instead of dying, so a flow can
// react to the first Ctrl+C (stop the remote job, still collect) and the second (leave now).
void install_interrupt_handler();

// How many interrupts arrived since the start.
int interrupt_count();

// Throws mlt::Error (interrupted, exit 130) when interrupt_count() has grown past `seen`.
// Long waits call it with the count they started with.
void throw_if_interrupted(int seen);

}  // namespace mlt
