#pragma once

// Reading MLTK's SshMixin settings (`my_model.ssh_remote_dir = "workspace"`) out of a Python
// model specification without running it. Private to src/config/.

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "mlt/config/settings.h"

namespace mlt::settings_detail {

// The SshMixin attributes mlt reads, without their `ssh_` prefix; each is also a key of `ssh:`.
const std::vector<std::string_view>& ssh_mixin_keys();

// Scans the Python source `text` of `file` for assignments `<name>.ssh_<key> = <literal>` and
// returns them as a YAML flow document `{"ssh": {"<key>": <value>, ...}}` whose entries start
// on the line (and where there is room, the column) of their assignment, so messages about it
// point into the spec. Of repeated assignments the last one counts. Keys in `skip` are left out.
// An assignment of one of ssh_mixin_keys() that is not a literal (a name, call, f-string, `+`,
// `%`, `+=`, ...) is left out with a warning naming the sidecar to use instead; an unknown
// `ssh_` attribute gets a warning. Never throws on malformed input: the result is always valid
// YAML, and nesting deeper than a fixed limit counts as not a literal.
std::string spec_literals_yaml(const std::string& file, std::string_view text,
                               const std::set<std::string>& skip,
                               std::vector<SettingsWarning>* warnings);

}  // namespace mlt::settings_detail
