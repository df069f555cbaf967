#include "harness/hostile_host.h"

#include <unistd.h>

#include <stdexcept>

#include "harness/files.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

// `text` as one sh word in single quotes.
std::string sq(const std::string& text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

// What every tool starts with: its helpers. hostile_has WORD ARGS...: WORD is one of ARGS;
// hostile_mark NAME: records that the tool NAME found its condition true.
std::string prologue(const std::string& name, const std::string& state_dir) {
    return "#!/bin/sh\n"
           "# A hostile " +
           name +
           " of the test host (tests/integration/harness/hostile_host.h).\n"
           "hostile_has() { hostile_w=$1; shift; for hostile_a in \"$@\"; do "
           "[ \"$hostile_a\" = \"$hostile_w\" ] && return 0; done; return 1; }\n"
           "hostile_mark() { printf '%s\\n' \"$1\" >> " +
           sq(state_dir + "/triggered") + "; }\n";
}

// The part of a hostile find that finds its listing: the options -H/-L/-P go to
// $hostile_o; the body runs only when the one start point is `.`, after the real listing
// (whose status is $rc), with "$@" the expression.
std::string find_listing(const std::string& when, const std::string& extra) {
    return "hostile_real=" + sq(HostileHost::real("find")) +
           "\n"
           "if " +
           when +
           "; then\n"
           "  hostile_o=\n"
           "  while :; do case $1 in -H|-L|-P) hostile_o=\"$hostile_o $1\"; shift;; *) break;; "
           "esac; done\n"
           "  case $2 in -*|'('|'!'|'') hostile_one=1;; *) hostile_one=;; esac\n"
           "  if [ \"$1\" = . ] && [ -n \"$hostile_one\" ]; then\n"
           "    hostile_mark find\n"
           "    \"$hostile_real\" $hostile_o \"$@\"; rc=$?\n"
           "    shift\n" +
           extra +
           "\n"
           "    exit $rc\n"
           "  fi\n"
           "  exec \"$hostile_real\" $hostile_o \"$@\"\n"
           "fi\n"
           "exec \"$hostile_real\" \"$@\"\n";
}

}  // namespace

std::string in_dir(const std::string& dir) {
    return "[ \"$(pwd -P)\" = " + sq(dir) + " ]";
}

std::string has_arg(const std::string& word) {
    return "hostile_has " + sq(word) + " \"$@\"";
}

std::string args_contain(const std::string& text) {
    return "{ case \"$*\" in *" + sq(text) + "*) true;; *) false;; esac; }";
}

HostileHost::HostileHost() {
    make_dir(tools_dir(), 0755);
    make_dir(dir_.file("state"), 0755);
    write_file(state_file("commands"), "", 0644);
    write_file(state_file("triggered"), "", 0644);
    write_wrapper();
}

void HostileHost::write_wrapper() const {
    // One line per session in state/commands (one write: sessions run side by side); the
    // first connection's SSH_CONNECTION in state/first_connection (noclobber: the first
    // session wins). The tools use absolute paths, never the PATH they are first on.
    const std::string text =
        "#!/bin/sh\n"
        "# The ForceCommand of the hostile test host (tests/integration/harness/hostile_host.h):\n"
        "# the session's command runs as sshd would run it, with the hostile tools first on "
        "PATH.\n"
        "hostile_c=$(printf '%s' \"${SSH_ORIGINAL_COMMAND-(a shell)}\" | " +
        real("head") + " -c 300 | " + real("tr") +
        " '\\n' ' ')\n"
        "printf '%s\\n' \"$hostile_c\" >> " +
        sq(state_file("commands")) +
        "\n"
        "(set -C; printf '%s\\n' \"$SSH_CONNECTION\" > " +
        sq(state_file("first_connection")) +
        ") 2>/dev/null\n"
        "PATH=" +
        sq(tools_dir()) +
        ":$PATH; export PATH\n"
        "if [ -n \"${SSH_ORIGINAL_COMMAND+set}\" ]; then\n"
        "  exec \"${SHELL:-/bin/sh}\" -c \"$SSH_ORIGINAL_COMMAND\"\n"
        "fi\n"
        "exec \"${SHELL:-/bin/sh}\"\n";
    write_file(dir_.file("force-command.sh"), text, 0755);
}

std::string HostileHost::sshd_config() const {
    return "ForceCommand " + dir_.file("force-command.sh") + "\n";
}

std::string HostileHost::state_file(const std::string& name) const {
    return dir_.file("state/" + name);
}

void HostileHost::add_tool(const std::string& name, const std::string& body) const {
    write_file(tools_dir() + "/" + name, prologue(name, dir_.file("state")) + body, 0755);
}

void HostileHost::wrap_tool(const std::string& name, const std::string& when,
                            const std::string& before, const std::string& after) const {
    add_tool(name, "hostile_real=" + sq(real(name)) + "\nif " + when +
                       "; then\n"
                       "  hostile_mark " +
                       name + "\n" + before +
                       "\n"
                       "  \"$hostile_real\" \"$@\"; rc=$?\n" +
                       after +
                       "\n"
                       "  exit $rc\n"
                       "fi\n"
                       "exec \"$hostile_real\" \"$@\"\n");
}

void HostileHost::remove_tool(const std::string& name) const {
    ::unlink((tools_dir() + "/" + name).c_str());
}

void HostileHost::find_adding_paths(const std::string& when,
                                    const std::vector<std::string>& paths) const {
    std::string extra;
    for (const auto& p : paths)
        extra += "    \"$hostile_real\" $hostile_o " + sq(p) + " -maxdepth 0 \"$@\" 2>/dev/null\n";
    add_tool("find", find_listing(when, extra));
}

void HostileHost::find_adding_output(const std::string& when, const std::string& output) const {
    add_tool("find", find_listing(when, output));
}

void HostileHost::tar_adding_names(const std::string& when,
                                   const std::vector<std::string>& names) const {
    std::string list;
    for (const auto& n : names) list += " " + sq(n);
    add_tool("tar", "hostile_real=" + sq(real("tar")) + "\nif " + when + " && " + has_arg("-cf") +
                        "; then\n"
                        "  hostile_mark tar\n"
                        "  { " +
                        real("cat") + "; printf '%s\\0'" + list +
                        "; } | \"$hostile_real\" \"$@\"; exit $?\n"
                        "fi\n"
                        "exec \"$hostile_real\" \"$@\"\n");
}

std::string HostileHost::on_side_connection() const {
    return "[ \"$SSH_CONNECTION\" != \"$(" + real("cat") + " " +
           sq(state_file("first_connection")) + ")\" ]";
}

void HostileHost::forget_first_connection() const {
    ::unlink(state_file("first_connection").c_str());
}

std::string HostileHost::stall() const {
    return "cd " + sq(dir()) + " && while :; do sleep 1; done";
}

std::string HostileHost::mark(const std::string& name) const {
    return ": > " + sq(state_file(name));
}

std::string HostileHost::real(const std::string& name) {
    for (const char* dir : {"/usr/bin/", "/bin/"}) {
        const std::string path = dir + name;
        if (::access(path.c_str(), X_OK) == 0) return path;
    }
    throw std::runtime_error("no " + name + " in /usr/bin or /bin for a hostile tool to wrap");
}

bool HostileHost::triggered(const std::string& name) const {
    return count_lines(read_or_empty(state_file("triggered")), name) > 0;
}

std::vector<std::string> HostileHost::commands() const {
    return split_lines(read_or_empty(state_file("commands")));
}

std::string HostileHost::describe() const {
    std::string text = "hostile host: tools triggered: ";
    for (const auto& line : split_lines(read_or_empty(state_file("triggered")))) text += line + " ";
    const auto cmds = commands();
    text += "\n" + std::to_string(cmds.size()) + " commands through the wrapper, the last ones:\n";
    for (size_t i = cmds.size() > 20 ? cmds.size() - 20 : 0; i < cmds.size(); ++i)
        text += "  " + cmds[i].substr(0, 160) + "\n";
    return text;
}

}  // namespace mlt_test
