#pragma once
// A hostile host for the integration tests: the test sshd runs every session through a
// ForceCommand wrapper that puts a directory of hostile tools first on PATH, then runs the
// session's command as sshd would (`"${SHELL:-/bin/sh}" -c "$SSH_ORIGINAL_COMMAND"`). mlt runs
// all of its remote commands in exec channels (the control shell is the exec channel
// `exec sh`, whose commands inherit its PATH; ranges, streams and side links are exec
// channels of their own), so every `find`, `tar`, `dd`, `cat`, `sha256sum` or `date` it
// runs on the host can be one of the test's. Where a tool is started from the job's
// `bash --login` batch instead, /etc/profile resets PATH: the training itself is not
// affected, mlt's own commands (and the job wrapper's `sha256sum`) are.
//
// How to add an attack test (tests/integration/test_hostile_*.cpp; HOSTILE.md says more):
//   1. Use the fixture HostileTrainTest (hostile_fixture.h). Prepare the remote side (a
//      model, files in the remote log dir) and the laptop side (a ~/.bashrc to protect).
//   2. Give the host a tool: host().wrap_tool("tar", when, before, after) wraps the real
//      binary (`before` and `after` are sh run around it when the condition `when` holds),
//      host().add_tool("name", body) writes any sh script; find_adding_paths() and
//      find_adding_output() add records to a listing in the same format as the ones mlt
//      asked for. Conditions: in_dir(path), has_arg(word). Every tool appends its name to
//      state/triggered when its condition held: assert host().triggered("tar"), so that a
//      test whose attack never ran cannot pass.
//   3. Take `auto before = snapshot({model}, {targets})` before the run, run mlt (mlt() or
//      start_mlt() with a bounded wait), then `expect_contained(result, before)`: nothing
//      outside the model's dirs changed, the peak RSS of that mlt is within the bound, the
//      debug logs within their cap, and the run ended within its wait.
//   4. Then assert what the issue asks for (an exit status, "tamper" on stderr...).
// A tool that must hang uses stall() (it runs in the host's dir, so TearDown ends it).

#include <string>
#include <vector>

#include "harness/temp_dir.h"

namespace mlt_test {

// A shell condition (for wrap_tool's `when`) that holds when the tool runs in `dir` (its
// working directory, symlinks resolved, equals `dir`).
std::string in_dir(const std::string& dir);
// A shell condition that holds when one of the tool's arguments is exactly `word`.
std::string has_arg(const std::string& word);
// A shell condition that holds when the tool's arguments, joined by spaces, contain `text`.
std::string args_contain(const std::string& text);

// The host's side: the wrapper, the tools dir and a state dir, in a TempDir of their own,
// all created by the constructor (sshd must find the wrapper at its first session).
class HostileHost {
  public:
    // Throws std::runtime_error when the files cannot be written.
    HostileHost();

    // The sshd_config line that runs every session through the wrapper.
    std::string sshd_config() const;
    // The host's own dir (wrapper, tools/, state/); processes working in it are the tools'.
    const std::string& dir() const { return dir_.path(); }
    std::string tools_dir() const { return dir_.file("tools"); }
    // A file under state/ (tools write markers there).
    std::string state_file(const std::string& name) const;

    // Writes tools/<name> as "#!/bin/sh" + the helper functions + `body`, mode 0755.
    void add_tool(const std::string& name, const std::string& body) const;
    // Writes tools/<name> wrapping the real binary: when the sh condition `when` holds, it
    // marks itself triggered, runs `before`, the real binary with the same arguments, then
    // `after` ("$@" is still the arguments, $rc the real one's status) and exits with $rc;
    // otherwise it execs the real binary.
    void wrap_tool(const std::string& name, const std::string& when, const std::string& before,
                   const std::string& after = {}) const;
    // Removes tools/<name> (the real one is used again).
    void remove_tool(const std::string& name) const;

    // A `find` that, when `when` holds and its only start point is `.` (a listing of mlt's),
    // prints what the real one prints, then the same records for each of `paths` (relative
    // to the dir it lists, e.g. "./../../../.bashrc"; real files on the host, so that every
    // later look at them agrees), in the format mlt asked for.
    void find_adding_paths(const std::string& when, const std::vector<std::string>& paths) const;
    // The same, but after the real listing it runs the sh `output` (e.g. a printf of made-up
    // records, or a flood).
    void find_adding_output(const std::string& when, const std::string& output) const;
    // A `tar` that, when `when` holds and it creates an archive (`-cf`), packs `names` too
    // (relative to its dir, appended to the NUL-separated name list mlt sent).
    void tar_adding_names(const std::string& when, const std::vector<std::string>& names) const;

    // A shell condition that holds in a session of any SSH connection but the first one the
    // host saw (the wrapper records the first SSH_CONNECTION): mlt's side links.
    std::string on_side_connection() const;
    // Forgets the first connection: the next session's connection counts as the first (an
    // mlt started after an earlier one).
    void forget_first_connection() const;

    // A sh command that never ends by itself (a loop of sleeps in the host's dir, so that
    // the fixture's TearDown finds and ends it).
    std::string stall() const;
    // A sh command that creates state/<name> (for a test to wait on).
    std::string mark(const std::string& name) const;
    // The real binary of `name` (/usr/bin or /bin); throws when there is none.
    static std::string real(const std::string& name);

    // True when tools/<name> found its condition true at least once.
    bool triggered(const std::string& name) const;
    // The commands the wrapper ran (their first 300 bytes, newlines as spaces), in order.
    std::vector<std::string> commands() const;
    // "hostile host: tools triggered: ...; commands: ..." for assertion messages.
    std::string describe() const;

  private:
    void write_wrapper() const;

    TempDir dir_{"mlt-hostile-"};
};

}  // namespace mlt_test
