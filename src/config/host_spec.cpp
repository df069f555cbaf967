// `-h` host specs ([user@]host[:port][/remote_dir]) and the rules a host name must follow.
#include "mlt/config/host_spec.h"

#include <arpa/inet.h>

#include <cctype>
#include <string>

#include "mlt/util/error.h"

namespace mlt {

namespace {

constexpr char kFormatHint[] =
    "write [user@]host[:port][/remote_dir], e.g. root@gpu.example.com:2222/~/work; "
    "IPv6 addresses go in brackets: [::1]:22";

[[noreturn]] void fail(std::string_view text, const std::string& problem) {
    throw usage_error("invalid host '" + std::string(text) + "': " + problem, kFormatHint);
}

// Port text as the user wrote it: decimal digits only (no sign, no spaces), 1..65535.
int parse_port(std::string_view text, std::string_view port) {
    if (port.empty()) fail(text, "empty port after ':'");
    long value = 0;
    for (char c : port) {
        if (c < '0' || c > '9') fail(text, "port '" + std::string(port) + "' is not a number");
        value = value * 10 + (c - '0');
        // Stop before overflow; anything this large is out of range anyway.
        if (value > 65535) break;
    }
    if (value < 1 || value > 65535) fail(text, "port " + std::string(port) + " is not in 1..65535");
    return static_cast<int>(value);
}

}  // namespace

HostSpec parse_host_spec(std::string_view text) {
    if (text.empty()) throw usage_error("empty host", kFormatHint);
    for (char c : text) {
        auto u = static_cast<unsigned char>(c);
        // Whitespace or control characters are always a quoting mistake on the command line
        // or in a config file, and would be unsafe to pass on to ssh or a remote shell.
        if (u <= 0x20 || u == 0x7f) fail(text, "contains whitespace or a control character");
    }

    HostSpec spec;
    // The remote dir starts at the first '/' after the authority. Brackets never contain
    // '/', so this cannot cut an IPv6 literal; '@' and ':' inside the dir are kept.
    std::string_view authority = text;
    if (size_t slash = text.find('/'); slash != std::string_view::npos) {
        authority = text.substr(0, slash);
        // MLTK's rule: what follows the '/' is the remote dir as written, so `h/workspace`
        // is relative to the login directory and `h//abs` is absolute.
        spec.remote_dir = std::string(text.substr(slash + 1));
        if (spec.remote_dir.empty())
            fail(text, "nothing after '/' (omit the '/' or write a remote directory after it)");
    }

    // Like OpenSSH, the last '@' separates the user from the host.
    std::string_view hostport = authority;
    if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
        if (at == 0) fail(text, "empty user name before '@'");
        spec.user = std::string(authority.substr(0, at));
        hostport = authority.substr(at + 1);
        if (spec.user[0] == '-') fail(text, "user name may not start with '-'");
    }

    if (!hostport.empty() && hostport[0] == '[') {
        size_t close = hostport.find(']');
        if (close == std::string_view::npos) fail(text, "'[' without a closing ']'");
        spec.host = std::string(hostport.substr(1, close - 1));
        if (spec.host.find('[') != std::string::npos) fail(text, "nested '['");
        std::string_view rest = hostport.substr(close + 1);
        if (!rest.empty()) {
            if (rest[0] != ':') fail(text, "unexpected text after ']' (expected ':port')");
            spec.port = parse_port(text, rest.substr(1));
        }
    } else {
        if (hostport.find_first_of("[]") != std::string_view::npos)
            fail(text, "unbalanced brackets (write IPv6 addresses as [address])");
        size_t colon = hostport.find(':');
        if (colon != std::string_view::npos &&
            hostport.find(':', colon + 1) != std::string_view::npos)
            fail(text, "more than one ':' (write IPv6 addresses in brackets: [::1]:22)");
        spec.host = std::string(hostport.substr(0, colon));
        if (colon != std::string_view::npos)
            spec.port = parse_port(text, hostport.substr(colon + 1));
    }

    if (spec.host.empty()) fail(text, "empty host name");
    // OpenSSH refuses these too: they would read as options to ssh or ProxyCommand.
    if (spec.host[0] == '-') fail(text, "host name may not start with '-'");
    return spec;
}

std::optional<std::string> host_name_problem(std::string_view name) {
    if (name.empty()) return "it is empty";
    const std::string text(name);
    unsigned char addr[16];
    if (::inet_pton(AF_INET, text.c_str(), addr) == 1 ||
        ::inet_pton(AF_INET6, text.c_str(), addr) == 1)
        return std::nullopt;
    // A fully qualified name may end in a dot.
    std::string_view rest = name.back() == '.' ? name.substr(0, name.size() - 1) : name;
    if (rest.size() > 253) return "it is longer than 253 characters";
    for (char c : rest) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '-' || c == '.') continue;
        if (c == '_') return "'_' is not allowed in host names";
        if (c == ':') return "':' only appears in IPv6 addresses, and this is none";
        if (u <= 0x20 || u >= 0x7f) return "it contains a blank, control or non-ASCII character";
        return std::string("'") + c + "' is not allowed in host names";
    }
    while (true) {
        const size_t dot = rest.find('.');
        const std::string_view label = rest.substr(0, dot);
        if (label.empty()) return "it has an empty label (two dots in a row, or a leading dot)";
        if (label.size() > 63)
            return "the part '" + std::string(label.substr(0, 20)) +
                   "...' is longer than 63 characters";
        if (label.front() == '-' || label.back() == '-')
            return "the part '" + std::string(label) + "' starts or ends with '-'";
        if (dot == std::string_view::npos) return std::nullopt;
        rest = rest.substr(dot + 1);
    }
}

std::string to_string(const HostSpec& spec) {
    std::string out;
    if (!spec.user.empty()) out += spec.user + "@";
    // A bare IPv6 address would make the port ambiguous, so it is bracketed again.
    if (spec.host.find(':') != std::string::npos)
        out += "[" + spec.host + "]";
    else
        out += spec.host;
    if (spec.port > 0) out += ":" + std::to_string(spec.port);
    if (!spec.remote_dir.empty()) out += "/" + spec.remote_dir;
    return out;
}

}  // namespace mlt
