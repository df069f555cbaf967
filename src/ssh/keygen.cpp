// `mlt ssh-keygen`: a new key pair (ed25519 or RSA) written as OpenSSH writes it.
#include "mlt/ssh/keygen.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "handles.h"
#include "mlt/util/error.h"
#include "mlt/util/paths.h"
#include "mlt/util/terminal.h"

namespace mlt {

using namespace ssh_detail;

namespace {

constexpr int kDefaultRsaBits = 3072;

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

// The name goes into two file names (id_<name>, id_<name>.pub) and their temporary names,
// which all must fit the file system's 255 bytes.
constexpr std::size_t kMaxNameBytes = 100;

bool blank_or_control(char c) {
    const auto u = static_cast<unsigned char>(c);
    return u <= 0x20 || u == 0x7f;
}

void validate(const KeygenRequest& r) {
    if (r.name.empty() || r.name.find('/') != std::string::npos || r.name[0] == '.' ||
        std::any_of(r.name.begin(), r.name.end(), blank_or_control))
        throw usage_error("invalid key name '" + r.name + "'",
                          "use a plain name such as 'vast'; the key becomes id_<name>");
    if (r.name.size() > kMaxNameBytes)
        throw usage_error("key name of " + std::to_string(r.name.size()) + " bytes is too long",
                          "use a plain name of at most " + std::to_string(kMaxNameBytes) +
                              " bytes such as 'vast'; the key becomes id_<name>");
    if (r.type == KeyType::ed25519 && r.bits != 0)
        throw usage_error("-l applies to rsa keys only", "drop -l, or add -t rsa");
    if (r.type == KeyType::rsa && r.bits != 0 && (r.bits < kMinRsaBits || r.bits > kMaxRsaBits))
        throw usage_error("rsa key size " + std::to_string(r.bits) + " is out of range",
                          "use -l between " + std::to_string(kMinRsaBits) + " and " +
                              std::to_string(kMaxRsaBits) + " (default 3072)");
    if (r.comment.find_first_of("\n\r") != std::string::npos)
        throw usage_error("the key comment may not contain a line break");
}

}  // namespace

KeygenResult generate_key(const KeygenRequest& request) {
    validate(request);
    const std::string dir =
        request.directory.empty() ? home_dir() + "/.ssh" : expand_user(request.directory);
    KeygenResult result;
    result.private_path = dir + "/id_" + request.name;
    result.public_path = result.private_path + ".pub";
    if (!request.force) {
        for (const auto* path : {&result.private_path, &result.public_path})
            if (exists(*path))
                throw usage_error(*path + " already exists", "use --force to overwrite it");
    }

    const int bits =
        request.type == KeyType::rsa ? (request.bits ? request.bits : kDefaultRsaBits) : 0;
    ssh_key raw = nullptr;
    if (ssh_pki_generate(request.type == KeyType::rsa ? SSH_KEYTYPE_RSA : SSH_KEYTYPE_ED25519, bits,
                         &raw) != SSH_OK)
        throw Error(ErrorKind::internal, "key generation failed in libssh");
    KeyPtr key(raw);

    char* priv_raw = nullptr;
    if (ssh_pki_export_privkey_base64(key.get(), nullptr, nullptr, nullptr, &priv_raw) != SSH_OK)
        throw Error(ErrorKind::internal, "cannot export the private key");
    std::string private_text(priv_raw);
    // libssh hands back a malloc'ed buffer holding the secret: clear it before freeing.
    std::memset(priv_raw, 0, private_text.size());
    ssh_string_free_char(priv_raw);
    if (private_text.empty() || private_text.back() != '\n') private_text += '\n';

    char* pub_raw = nullptr;
    if (ssh_pki_export_pubkey_base64(key.get(), &pub_raw) != SSH_OK)
        throw Error(ErrorKind::internal, "cannot export the public key");
    CString pub_b64(pub_raw);
    result.public_line = std::string(ssh_key_type_to_char(ssh_key_type(key.get()))) + " " +
                         pub_b64.get() + " " +
                         (request.comment.empty() ? request.name : request.comment);

    if (!exists(dir) && ::mkdir(dir.c_str(), 0700) != 0)
        throw io_error("cannot create " + dir + ": " + std::strerror(errno),
                       "create it, or choose another directory with -o");
    // The private key is written with mode 0600 from its first byte (libssh's own file
    // export leaves it 0644, which OpenSSH refuses).
    write_file_atomic(result.private_path, private_text, 0600);
    wipe(private_text);
    write_file_atomic(result.public_path, result.public_line + "\n", 0644);
    return result;
}

}  // namespace mlt
