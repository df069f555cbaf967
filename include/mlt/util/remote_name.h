#pragma once
// The one gate for every path that comes from a remote host (a listing record, a tar entry,
// the target of a range download, a download_files result): the remote is a stranger, and a
// name it sends decides where a local file is written or deleted.

#include <string>
#include <string_view>

namespace mlt {

// The longest name accepted from the remote (4 x PATH_MAX: a remote tree can be deeper than
// one path can name; a pull skips such a file as too long here) and its longest component
// (NAME_MAX).
constexpr size_t kMaxRemoteName = 16384;
constexpr size_t kMaxRemoteComponent = 255;

// Why `name`, a `/`-separated path relative to a root that was asked for, cannot be used
// under that root locally: "" when it can. It must be relative, at most kMaxRemoteName bytes,
// free of control characters (bytes below 0x20 and 0x7f), and each component must be
// neither empty, "." nor ".." and at most kMaxRemoteComponent bytes.
std::string remote_name_problem(std::string_view name);

// Throws tampered_error("<what>", "<problem> in '<name>'") when remote_name_problem(name) is
// not "": `what` names the source and the host ("the listing of DIR on HOST"). The name is
// shown escaped and bounded.
void check_remote_name(std::string_view name, const std::string& what);

}  // namespace mlt
