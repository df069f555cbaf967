#pragma once

#include <optional>
#include <string>

namespace mlt {

// Asks for a secret (passphrase, password) the way OpenSSH does: through $SSH_ASKPASS when
// SSH_ASKPASS_REQUIRE is `force` or `prefer`, or when there is no terminal; otherwise on
// /dev/tty with echo off. Returns nullopt when nobody can be asked (no terminal, no askpass)
// or the askpass program fails. The prompt is never a secret; the answer is never logged.
std::optional<std::string> prompt_secret(const std::string& prompt);

// True when the process has a controlling terminal it can prompt on.
bool have_terminal();

// Overwrites a string's bytes before it is released (passwords, passphrases).
void wipe(std::string& secret);

}  // namespace mlt
