// `mlt ssh-keygen NAME ...`
#include <cstdio>
#include <memory>

#include "mlt/cli/commands.h"
#include "mlt/ssh/keygen.h"

namespace mlt::cli {

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
        ->transform(CLI::CheckedTransformer(
            std::map<std::string, KeyType>{{"ed25519", KeyType::ed25519}, {"rsa", KeyType::rsa}},
            CLI::ignore_case))
        ->default_str("ed25519")
        ->option_text("ed25519|rsa");  // not CLI11's view of the enum's values
    cmd->add_option("-l,--length", req->bits, "RSA key size in bits (default 3072)")
        ->type_name("BITS")
        ->transform(decimal_in(0, 65536));  // the key size range is checked with the type
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
