#pragma once

// One SshMixin assignment's value read as a Python literal and written as YAML
// (literal_yaml.cpp). Private to src/config/.

#include <string>
#include <string_view>

#include "python_lexer.h"

namespace mlt::settings_detail {

// Reads the right-hand side of an assignment to `ssh_<key>` (the tokens after its `=`, up to
// the end of the statement; a bare `a, b` is a tuple) as a Python literal, and sets `yaml` to
// the entry `"<key>": <value>` laid out from column 1 of `at.line` so that the key stands at
// `at` and each value at the line and column of its source where the text so far leaves
// room; `end_line` is the line that text ends on. False, with `yaml` untouched, when the value
// is no literal (a name, a call, an f-string, an operator, nesting over a fixed depth): the
// tokens then stand at or just after the first token that is not part of a literal, so the
// caller's scan resumes there and reads no token twice.
bool literal_entry_yaml(PyTokens& tokens, SourcePos at, std::string_view key, std::string& yaml,
                        int& end_line);

}  // namespace mlt::settings_detail
