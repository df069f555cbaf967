// The one gate for every name that comes from a remote host (docs/security.md).
#include "mlt/util/remote_name.h"

#include "mlt/util/error.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

std::string component_problem(std::string_view part) {
    if (part.empty()) return "an empty path component";
    if (part == ".") return "a '.' component";
    if (part == "..") return "a '..' component";
    if (part.size() > kMaxRemoteComponent)
        return "a component longer than " + std::to_string(kMaxRemoteComponent) + " bytes";
    return {};
}

}  // namespace

std::string remote_name_problem(std::string_view name) {
    if (name.empty()) return "an empty name";
    if (name.size() > kMaxRemoteName)
        return "a name longer than " + std::to_string(kMaxRemoteName) + " bytes";
    if (name.front() == '/') return "an absolute name";
    for (char c : name)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "a control character";
    size_t start = 0;
    for (;;) {
        const size_t end = name.find('/', start);
        const std::string_view part = name.substr(
            start, end == std::string_view::npos ? std::string_view::npos : end - start);
        std::string problem = component_problem(part);
        if (!problem.empty()) return problem;
        if (end == std::string_view::npos) return {};
        start = end + 1;
    }
}

void check_remote_name(std::string_view name, const std::string& what) {
    const std::string problem = remote_name_problem(name);
    if (!problem.empty())
        throw tampered_error(what, problem + " in '" + printable(name, 200) + "'");
}

}  // namespace mlt
