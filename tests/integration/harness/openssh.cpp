#include "harness/openssh.h"

#include <cstdlib>
#include <stdexcept>

#include "harness/files.h"
#include "harness/process.h"

namespace mlt_test {
namespace {

ProcessResult run_tool(const std::vector<std::string>& argv) {
    ProcessResult result = run_process(argv, tool_environment(), kToolTimeout);
    if (result.exit_code != 0) {
        std::string cmd;
        for (const auto& arg : argv) cmd += arg + " ";
        throw std::runtime_error(cmd + "failed (exit " + std::to_string(result.exit_code) +
                                 "): " + result.err);
    }
    return result;
}

}  // namespace

std::vector<std::string> tool_environment() {
    std::vector<std::string> env = {"LANG=C"};
    for (const char* name : {"PATH", "HOME"}) {
        if (const char* value = std::getenv(name)) env.push_back(std::string(name) + "=" + value);
    }
    return env;
}

void make_ssh_key(const std::string& path, const std::string& type, const std::string& passphrase,
                  const std::string& comment, int bits) {
    std::vector<std::string> argv = {"ssh-keygen", "-q", "-t", type};
    if (bits > 0) {
        argv.push_back("-b");
        argv.push_back(std::to_string(bits));
    }
    argv.insert(argv.end(), {"-N", passphrase, "-C", comment, "-f", path});
    run_tool(argv);
}

KeyInfo key_info(const std::string& path) {
    ProcessResult result = run_tool({"ssh-keygen", "-lf", path});
    // "256 SHA256:abc comment (ED25519)"
    std::vector<std::string> fields = split_fields(result.out);
    if (fields.size() < 3)
        throw std::runtime_error("unexpected ssh-keygen -lf output: " + result.out);
    KeyInfo info;
    info.bits = std::atoi(fields[0].c_str());
    info.fingerprint = fields[1];
    const std::string& last = fields.back();
    if (last.size() > 2 && last.front() == '(' && last.back() == ')') {
        info.type = last.substr(1, last.size() - 2);
    }
    return info;
}

std::string public_key_of(const std::string& private_path) {
    return trim(run_tool({"ssh-keygen", "-y", "-f", private_path}).out);
}

std::string key_type_and_blob(const std::string& pub_line) {
    std::vector<std::string> fields = split_fields(pub_line);
    if (fields.size() < 2) return {};
    return fields[0] + " " + fields[1];
}

}  // namespace mlt_test
