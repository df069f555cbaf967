#pragma once

namespace mlt {

// Installs the SIGINT/SIGTERM handler that counts interrupts instead of dying, so a flow can
// react to the first Ctrl+C (stop the remote job, still collect) and the second (leave now).
void install_interrupt_handler();

// Marks one interrupt as handled (the flow reacted to it). Interrupts beyond the handled
// ones are pending, also those that arrived before the flow could react.
void acknowledge_interrupt();

// Throws mlt::Error (interrupted, exit 130) while an interrupt is pending. Every remote wait
// calls it, so a pending Ctrl+C ends whatever runs.
void throw_if_interrupted();

}  // namespace mlt
