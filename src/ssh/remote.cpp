#include "mlt/ssh/remote.h"

#include "mlt/ssh/session.h"

namespace mlt {

const std::string& SessionRemote::name() const { return session_.display_name(); }

RemoteOutput SessionRemote::run(const std::string& command, std::string_view input) {
    RemoteOutput result;
    auto r = session_.exec(
        command, [&](std::string_view d) { result.out.append(d); },
        [&](std::string_view d) { result.err.append(d); }, input);
    result.exit_status = r.exit_status;
    return result;
}

}  // namespace mlt
