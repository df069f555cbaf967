#pragma once

#include <string>
#include <string_view>

namespace mlt {

class Session;

// What a remote command printed and how it ended.
struct RemoteOutput {
    int exit_status = -1;
    std::string out;
    std::string err;
};

// The seam between the job/train logic and the SSH transport: unit tests give the logic a
// fake, the integration suite a real Session.
class Remote {
public:
    virtual ~Remote() = default;
    // `user@host:port`, for messages.
    virtual const std::string& name() const = 0;
    // Runs a shell command (built with shell_quote) and collects its output; throws
    // mlt::Error when the transport fails, not when the command fails.
    virtual RemoteOutput run(const std::string& command, std::string_view input = {}) = 0;
};

// A Remote over an open Session (which must outlive it).
class SessionRemote : public Remote {
public:
    explicit SessionRemote(Session& session) : session_(session) {}
    const std::string& name() const override;
    RemoteOutput run(const std::string& command, std::string_view input = {}) override;

private:
    Session& session_;
};

}  // namespace mlt
