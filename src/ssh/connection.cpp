// SessionConnection: the run engine's reopenable link over real SSH sessions.
#include "mlt/ssh/connection.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "mlt/ssh/session.h"

namespace mlt {

bool is_link_loss(const Error& error) {
    return is_link_loss(error.kind());
}

bool is_link_loss(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::disconnected:
        case ErrorKind::timeout:
        case ErrorKind::connect:
            return true;
        default:
            return false;
    }
}

SessionConnection::SessionConnection(const ConnectSpec& spec)
    : connector_(std::make_shared<Connector>(spec)) {}

SessionConnection::SessionConnection(std::shared_ptr<Connector> connector)
    : connector_(std::move(connector)) {}

SessionConnection::~SessionConnection() = default;

const std::string& SessionConnection::name() const {
    return connector_->display_name();
}

Remote& SessionConnection::remote() {
    if (ahead_error_) std::rethrow_exception(std::exchange(ahead_error_, nullptr));
    if (!remote_) {
        session_ = std::make_unique<Session>(connector_->open());
        remote_ = std::make_unique<SessionRemote>(*session_);
    }
    return *remote_;
}

void SessionConnection::open_ahead() {
    try {
        // The control shell's channel opens too, while the caller plans its first command.
        remote().prepare();
    } catch (const Error& e) {
        if (is_signal(e.kind())) throw;
        ahead_error_ = std::current_exception();
    }
}

void SessionConnection::reconnect() {
    // The old session is freed without a goodbye that could wait on a dead link: libssh's
    // disconnect only writes into the socket buffer and closes it.
    ahead_error_ = nullptr;
    remote_.reset();
    session_.reset();
    remote();
}

std::unique_ptr<Connection> SessionConnection::open_side() {
    // Not make_unique: the constructor is private.
    return std::unique_ptr<Connection>(new SessionConnection(connector_));
}

}  // namespace mlt
