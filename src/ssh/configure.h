#pragma once
// A libssh session set up from a ConnectSpec and the ssh config (configure.cpp). Private to
// src/ssh/.

#include <string>
#include <vector>

#include "handles.h"
#include "mlt/config/settings.h"
#include "mlt/ssh/session.h"

namespace mlt::ssh_detail {

// A connect spec after the ssh config was layered in: the same for every session opened
// from one spec.
struct Resolved {
    std::string hostname;  // what libssh connects to (the HostName of an alias)
    std::string user, identity, known_hosts, host_port, display;
    int port = 22;
    HostKeyChecking checking = HostKeyChecking::accept_new;
    int alive_interval_s = 10;
    int alive_count_max = 2;
    int connect_timeout_s = 15;
    // The proxy: the command to run, OpenSSH's tokens expanded (empty: a direct connection),
    // where it came from ("ProxyJump gpu_jump at FILE:LINE", "-o ProxyCommand=..."), and for a
    // ProxyJump the hop `ssh -W` logs in to.
    std::string proxy_command, proxy_origin, jump_host;
    bool proxy_is_jump = false;
    // What the ssh config says that mlt does not do, for the caller to show once.
    std::vector<std::string> config_warnings;
    // The config lines of keywords mlt does not use ("FILE:LINE Keyword"), for -v.
    std::vector<std::string> unused_config;
};

// Sets up a fresh session from `spec` and returns what it resolved to: the ssh config entry
// of spec.host read as OpenSSH does (Host patterns against the name as typed), libssh given
// only its HostName, then the command line over the entry over the settings. Throws Error
// (config, exit 2) for a name that is no valid host name (naming where it came from and what
// to do), a config line libssh refuses, or a bad option.
Resolved configure(ssh_session raw, const ConnectSpec& spec);

}  // namespace mlt::ssh_detail
