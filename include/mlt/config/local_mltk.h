#pragma once
// The version of the MLTK installed here, which pins the remote silabs-mltk as MLTK does. A
// spec load through MLTK (spec_loader auto or mltk) reports it on the way, so a train whose
// spec is Python starts the local python3 once, not twice.

#include <optional>
#include <string>

namespace mlt {

// Whether `text` is a version: digits, dots and letters (and `+-_`), not empty.
bool is_mltk_version(const std::string& text);

// Remembers, for this process, what a spec load run with the interpreter `python` found:
// `version` as the driver reported it (nullopt: no MLTK importable). A value that is not a
// version (is_mltk_version) is remembered as "" (no pin), as the probe would read it.
// Thread-safe; a later load with the same interpreter replaces an earlier one's.
void remember_local_mltk_version(const std::string& python,
                                 const std::optional<std::string>& version);

// The local MLTK's version, "" when there is none: what a spec load with `python3` (the
// default interpreter, looked up in PATH) remembered, else (no such load ran: spec_loader
// literals, a .yaml or .json spec, no spec) `python3 -c 'import mltk; ...'` run once per
// process, bounded by 10 s. Thread-safe.
std::string local_mltk_version();

}  // namespace mlt
