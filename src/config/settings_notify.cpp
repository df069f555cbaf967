// Reading `notify`: its targets, each URL checked when read and never quoted in a message (it is
// a secret), and the masked form messages show instead.
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "mlt/util/error.h"
#include "settings_values.h"

namespace mlt {

namespace {

constexpr size_t kMaxUrl = 2048;

// The length of "http://" or "https://" at the start of `url` (any case), else 0.
size_t scheme_length(const std::string& url) {
    for (const char* scheme : {"http://", "https://"}) {
        const std::string s(scheme);
        if (url.size() < s.size()) continue;
        bool same = true;
        for (size_t i = 0; i < s.size() && same; ++i)
            same = std::tolower(static_cast<unsigned char>(url[i])) == s[i];
        if (same) return s.size();
    }
    return 0;
}

// The host (and port) of a URL past its scheme: the authority less any user:password@.
std::string host_of(const std::string& url, size_t scheme) {
    const size_t end = url.find_first_of("/?#", scheme);
    std::string authority =
        url.substr(scheme, end == std::string::npos ? std::string::npos : end - scheme);
    const size_t at = authority.rfind('@');
    return at == std::string::npos ? authority : authority.substr(at + 1);
}

// Whether `host` is only a host name or address with an optional :port: anything else (a
// password whose `/` ended the authority early, say) may be part of a secret.
bool plain_host(const std::string& host) {
    std::string name = host;
    const size_t colon = name.rfind(':');
    const size_t bracket = name.rfind(']');
    if (colon != std::string::npos && (bracket == std::string::npos || colon > bracket)) {
        const std::string port = name.substr(colon + 1);
        if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos) return false;
        name.erase(colon);
    }
    if (name.size() > 2 && name.front() == '[' && name.back() == ']')
        return name.find_first_not_of("0123456789abcdefABCDEF:.", 1) == name.size() - 1;
    return !name.empty() && name.find_first_not_of(
                                "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
                                "TUVWXYZ0123456789.-_") == std::string::npos;
}

}  // namespace

const char* notify_format_name(NotifyFormat format) {
    switch (format) {
        case NotifyFormat::ntfy:
            return "ntfy";
        case NotifyFormat::slack:
            return "slack";
        case NotifyFormat::json:
            break;
    }
    return "json";
}

std::string masked_url(const std::string& url) {
    const size_t scheme = scheme_length(url);
    const std::string host = scheme == 0 ? std::string() : host_of(url, scheme);
    if (!plain_host(host)) return "(a URL)";
    return url.substr(0, scheme) + host + "/…";
}

std::optional<std::string> notify_url_problem(const std::string& url) {
    const size_t scheme = scheme_length(url);
    if (scheme == 0) return "it does not start with http:// or https://";
    if (url.size() > kMaxUrl) return "it is longer than " + std::to_string(kMaxUrl) + " bytes";
    for (char c : url) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte == ' ' || byte == '\t') return "it holds a blank";
        if (byte < 0x20 || byte == 0x7f) return "it holds a control character";
        if (byte >= 0x80) return "it holds a non-ASCII character (percent-encode it)";
        if (c == '"' || c == '\\') return "it holds a `\"` or `\\` (percent-encode it)";
    }
    if (host_of(url, scheme).empty()) return "it names no host";
    return std::nullopt;
}

namespace settings_detail {

namespace {

// What the user wrote, for "got ..." in a message about `notify`: the shape only, since a
// scalar there may be a URL.
std::string shape_of(const YAML::Node& node) {
    return node.IsScalar() ? std::string("a string") : describe(node);
}

}  // namespace

std::vector<NotifyTarget> ValueReader::read_notify(const FieldDecl& field, const YAML::Node& node,
                                                   const std::string& key) const {
    if (!node.IsSequence())
        throw config_error(yaml_.where(node) + ": " + key + " must be " + type_description(field) +
                               ", got " + shape_of(node),
                           hint_for(field));
    std::vector<NotifyTarget> out;
    for (size_t i = 0; i < node.size(); ++i) {
        const std::string item = key + "[" + std::to_string(i) + "]";
        if (!node[i].IsMap())
            throw config_error(yaml_.where(node[i]) + ": " + item +
                                   " must be a mapping (url, format), got " + shape_of(node[i]),
                               hint_for(field));
        out.push_back(read_notify_target(node[i], item));
    }
    return out;
}

NotifyTarget ValueReader::read_notify_target(const YAML::Node& node, const std::string& key) const {
    NotifyTarget target;
    bool has_url = false;
    each_known(
        node, key, notify_target_fields(),
        [&](const std::string& name, const FieldDecl& field, const YAML::Node& v) {
            if (v.IsNull()) return;
            if (name == "format") {
                const std::string word = std::get<std::string>(read(field, v, key + "." + name));
                target.format = word == "ntfy"    ? NotifyFormat::ntfy
                                : word == "slack" ? NotifyFormat::slack
                                                  : NotifyFormat::json;
                return;
            }
            // Not read(): its type error quotes a scalar, and this one is a secret.
            if (!v.IsScalar() || v.Scalar().empty())
                throw config_error(yaml_.where(v) + ": " + key +
                                       ".url must be an http:// or https:// URL, got " +
                                       shape_of(v),
                                   "write it like `url: \"https://ntfy.sh/my-runs\"`");
            target.url = v.Scalar();
            has_url = true;
            if (auto why = notify_url_problem(target.url))
                throw config_error(yaml_.where(v) + ": " + key + ".url (" + masked_url(target.url) +
                                       ") is no usable webhook URL: " + *why,
                                   "give an http:// or https:// URL without blanks, e.g. "
                                   "\"https://ntfy.sh/my-runs\"");
        });
    if (!has_url)
        throw config_error(yaml_.where(node) + ": " + key + " has no url",
                           "give the webhook, e.g. {url: \"https://ntfy.sh/my-runs\", format: "
                           "ntfy}");
    return target;
}

}  // namespace settings_detail

}  // namespace mlt
