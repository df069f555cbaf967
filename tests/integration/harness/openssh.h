#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "harness/time_factor.h"

namespace mlt_test {

// Bound for every call of an OpenSSH tool (ssh-keygen, ssh) made by the harness.
inline const std::chrono::seconds kToolTimeout = scaled(std::chrono::seconds{30});

// The environment the harness runs OpenSSH tools with: PATH and HOME of this process,
// LANG=C, and no agent (SSH_AUTH_SOCK is left out).
std::vector<std::string> tool_environment();

// Creates `path` and `path`.pub with `ssh-keygen -q -t type [-b bits] -N passphrase -C
// comment -f path`; throws std::runtime_error with ssh-keygen's stderr on failure.
void make_ssh_key(const std::string& path, const std::string& type = "ed25519",
                  const std::string& passphrase = "", const std::string& comment = "mlt-test",
                  int bits = 0);

// The fields of `ssh-keygen -lf path`: bit count, "SHA256:..." fingerprint and key type
// (e.g. "ED25519"); throws std::runtime_error when ssh-keygen fails.
struct KeyInfo {
    int bits = 0;
    std::string fingerprint;
    std::string type;
};
KeyInfo key_info(const std::string& path);

// `ssh-keygen -y -f private_path` (the public key line OpenSSH derives from the private
// key, unencrypted keys only); throws std::runtime_error with its stderr on failure.
std::string public_key_of(const std::string& private_path);

// "type base64" of a public key line (drops the comment); empty if it has < 2 fields.
std::string key_type_and_blob(const std::string& pub_line);

}  // namespace mlt_test
