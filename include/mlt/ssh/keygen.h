#pragma once

#include <string>

namespace mlt {

enum class KeyType { ed25519, rsa };

// The RSA key sizes generate_key takes (-l); `mlt ssh-keygen --help` shows the same range.
constexpr int kMinRsaBits = 2048;
constexpr int kMaxRsaBits = 16384;

struct KeygenRequest {
    std::string name;  // key name: files are id_<name> and id_<name>.pub
    KeyType type = KeyType::ed25519;
    int bits = 0;           // 0: 3072 for rsa; must stay 0 for ed25519
    std::string directory;  // empty: ~/.ssh
    std::string comment;    // empty: the name
    bool force = false;     // overwrite existing files
};

struct KeygenResult {
    std::string private_path;
    std::string public_path;
    std::string public_line;  // "<type> <base64> <comment>"
};

// Generates a key pair in OpenSSH-readable formats: the private key mode 0600, the public
// key 0644, the directory created 0700 when missing. Throws mlt::Error (exit 2) on a bad
// request or when a file exists and force is false (nothing is then written).
KeygenResult generate_key(const KeygenRequest& request);

}  // namespace mlt
