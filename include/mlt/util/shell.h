#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mlt {

// Quotes one value for a POSIX shell so that it reaches the program as exactly one word,
// whatever bytes it holds (quotes, newlines, $, globs). The only way values enter a remote
// command line in mlt.
std::string shell_quote(std::string_view value);

// Quotes a remote path of the settings like shell_quote, but keeps a leading `~` or `~/`
// meaning the remote user's home ("~/a b" becomes "$HOME"/'a b') and lets `$NAME` and
// `${NAME}` expand on the remote, as MLTK's paths do; `$(...)`, backquotes, globs and `~user`
// stay literal.
std::string shell_quote_path(std::string_view path);

// Puts a value in double quotes as MLTK's `export K="v"` does, so that `$VAR`, `${VAR}`,
// `$(...)`, backquotes and backslash escapes act as they would there; a bare `"` is escaped
// and a trailing lone backslash doubled, so the word always ends where it should.
std::string shell_double_quote(std::string_view value);

// A shell word that, given to `printf` as its only argument, prints exactly `bytes` (NULs
// included): `%` and `\` are doubled, bytes outside printable ASCII become `\ooo`. How small
// inputs travel inside a command line (the control shell has no spare stdin).
std::string printf_literal(std::string_view bytes);

// `name=WORD` and a newline: one input of a remote script (src/*/sh/*.sh), set before its
// text. `word` is one shell word already (shell_quote, shell_quote_path, a number).
std::string shell_assignment(std::string_view name, std::string_view word);

// Quotes each word and joins them with single spaces.
std::string shell_join(const std::vector<std::string>& words);

}  // namespace mlt
