// `mlt ssh-keygen NAME ...`
#include <cctype>
#include <cstdio>
#include <memory>

#include "mlt/cli/commands.h"
#include "mlt/ssh/keygen.h"
#include "mlt/util/text.h"

namespace mlt::cli {

namespace {

// -t: a key type in any case, handed on as the enum's number (CLI11's own enum check would
// print its internal map on a bad value).
CLI::Validator key_type() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            std::string name = text;
            for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            if (name == "ed25519" || name == "rsa") {
                const KeyType type = name == "rsa" ? KeyType::rsa : KeyType::ed25519;
                text = std::to_string(static_cast<int>(type));
                return {};
            }
            return "'" + printable(text, 40) + "' is not a key type mlt makes: use ed25519 or rsa";
        },
        "");
}

}  // namespace

void add_ssh_keygen_command(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("ssh-keygen", "Create an SSH key pair ~/.ssh/id_NAME{,.pub}");
    cmd->footer(
        "Examples:\n"
        "  mlt ssh-keygen vast                 # ~/.ssh/id_vast (Ed25519) and id_vast.pub\n"
        "  mlt ssh-keygen lab -t rsa -l 4096 -o ./keys -C me@laptop\n"
        "  mlt ssh-keygen utest --type rsa --length 2048 --output ./keys   # MLTK's spelling");
    auto req = std::make_shared<KeygenRequest>();
    cmd->add_option("NAME", req->name, "Key name: the files are id_NAME and id_NAME.pub")
        ->required();
    cmd->add_option("-t,--type", req->type, "Key type (default ed25519)")
        ->transform(key_type())
        ->default_str("ed25519")
        ->option_text("ed25519|rsa");
    // The range generate_key enforces, so that the help says what the binary does.
    cmd->add_option("-l,--length", req->bits, "RSA key size in bits (default 3072)")
        ->type_name("BITS")
        ->transform(decimal_in(kMinRsaBits, kMaxRsaBits));
    cmd->add_option("-o,--output,--output-dir", req->directory,
                    "Directory of the key files (default ~/.ssh)")
        ->type_name("DIR");
    cmd->add_option("-C,--comment", req->comment, "Comment of the public key (default NAME)");
    cmd->add_flag("--force", req->force, "Overwrite an existing key");
    cmd->callback([&action, req] {
        action = [req] {
            KeygenResult r = generate_key(*req);
            std::printf("%s\n", r.public_line.c_str());
            std::fprintf(stderr, "mlt: wrote %s (private, 0600) and %s\n", r.private_path.c_str(),
                         r.public_path.c_str());
            return 0;
        };
    });
}

}  // namespace mlt::cli
