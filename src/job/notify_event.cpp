// A run's notification events: their id, their JSON and the bodies of each target format, the
// files notify_send.sh reads. The bytes are those notify_send.sh's awk builds from the same
// files (tests/unit/test_job_notify.cpp holds them equal): every rule here has its twin there.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "mlt/job/notify.h"
#include "remote_scripts.h"

namespace mlt {

namespace {

constexpr size_t kLineBytes = 300;
constexpr size_t kLastLines = 10;

// The length of the UTF-8 sequence that `lead` starts past it (1 to 3 continuation bytes), or 0.
size_t continuation_bytes(unsigned char lead) {
    if (lead >= 0xc2 && lead <= 0xdf) return 1;
    if (lead >= 0xe0 && lead <= 0xef) return 2;
    if (lead >= 0xf0 && lead <= 0xf4) return 3;
    return 0;
}

// A text made safe to send (awk's clean()): a trailing CR goes, what precedes the last CR goes
// (a progress bar's earlier states), then the first 300 bytes; a tab becomes a blank, other
// control bytes and bytes of no UTF-8 sequence `?`.
std::string clean(std::string s) {
    if (!s.empty() && s.back() == '\r') s.pop_back();
    const size_t cr = s.rfind('\r');
    if (cr != std::string::npos) s.erase(0, cr + 1);
    if (s.size() > kLineBytes) s.resize(kLineBytes);
    std::string out;
    for (size_t i = 0; i < s.size();) {
        const auto byte = static_cast<unsigned char>(s[i]);
        if (byte == '\t') {
            out += ' ';
        } else if (byte < 0x20 || byte == 0x7f) {
            out += '?';
        } else if (byte < 0x80) {
            out += s[i];
        } else {
            const size_t k = continuation_bytes(byte);
            bool ok = k > 0 && i + k < s.size();
            for (size_t j = 1; ok && j <= k; ++j) {
                const auto next = static_cast<unsigned char>(s[i + j]);
                ok = next >= 0x80 && next <= 0xbf;
            }
            if (ok) {
                out.append(s, i, k + 1);
                i += k + 1;
                continue;
            }
            out += '?';
        }
        ++i;
    }
    return out;
}

// `s` with each character that `map` names replaced by its text (awk's tr()).
std::string replaced(const std::string& s,
                     std::initializer_list<std::pair<char, const char*>> map) {
    std::string out;
    for (char c : s) {
        const auto* hit = std::find_if(map.begin(), map.end(),
                                       [c](const auto& entry) { return entry.first == c; });
        if (hit == map.end())
            out += c;
        else
            out += hit->second;
    }
    return out;
}

// A JSON string's inside: clean() left only `\`, `"` and, in slack's text, newlines to escape.
std::string esc(const std::string& s) {
    return replaced(s, {{'\\', "\\\\"}, {'"', "\\\""}, {'\n', "\\n"}});
}

// Slack's three special characters.
std::string amp(const std::string& s) {
    return replaced(s, {{'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}});
}

// `value` with `decimals` decimals, as printf's %.Nf (and awk's) writes it.
std::string fixed(double value, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

// The cost as the fields file writes it (4 decimals), or "" when there is none to tell.
std::string cost_text(const NotifyEvent& e) {
    if (!e.cost || !std::isfinite(*e.cost) || *e.cost < 0) return {};
    return fixed(*e.cost, 4);
}

// 45s, 2m 05s, 1h 02m (awk's dur()).
std::string duration_text(long long d) {
    if (d < 60) return std::to_string(d) + "s";
    char buf[64];
    if (d < 3600)
        std::snprintf(buf, sizeof buf, "%lldm %02llds", d / 60, d % 60);
    else
        std::snprintf(buf, sizeof buf, "%lldh %02lldm", d / 3600, (d % 3600) / 60);
    return buf;
}

// The event's word with blanks for underscores: "unattended shutdown".
std::string words(NotifyEventKind kind) {
    std::string w = notify_event_name(kind);
    for (char& c : w)
        if (c == '_') c = ' ';
    return w;
}

// The safe texts of one event, as awk reads them back from its files.
struct Safe {
    std::string model, run_id, host, reason, event, words, attempt, exit_status, duration, cost;
    std::vector<std::string> lines;  // the last 10
};

// The lines of the last_lines file as awk reads them back: one record per newline.
std::vector<std::string> records_of(const std::string& text) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at < text.size()) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        out.push_back(text.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

// A field's value as the fields file carries it (a newline would end its line).
std::string field_value(const std::string& s) {
    std::string out = s;
    for (char& c : out)
        if (c == '\n') c = '?';
    return out;
}

Safe safe_of(const NotifyEvent& e) {
    Safe s;
    s.model = clean(field_value(e.model));
    s.run_id = clean(field_value(e.run_id));
    s.host = clean(field_value(e.host));
    s.reason = clean(field_value(e.reason));
    s.event = notify_event_name(e.event);
    s.words = words(e.event);
    s.attempt = e.attempt >= 0 ? std::to_string(e.attempt) : std::string();
    s.exit_status = e.exit_status ? std::to_string(*e.exit_status) : std::string();
    s.duration = e.duration_s >= 0 ? std::to_string(e.duration_s) : std::string();
    s.cost = cost_text(e);
    std::vector<std::string> all = records_of(notify_last_lines_text(e));
    const size_t first = all.size() > kLastLines ? all.size() - kLastLines : 0;
    for (size_t i = first; i < all.size(); ++i) s.lines.push_back(clean(all[i]));
    return s;
}

std::string json_or_null(const std::string& number) {
    return number.empty() ? "null" : number;
}

// "MODEL EVENT on HOST: REASON" and "run R, attempt N, exit status S, 1h 02m, $0.12".
std::string summary(const Safe& s) {
    std::string text = s.model + " " + s.words + " on " + s.host;
    if (!s.reason.empty()) text += ": " + s.reason;
    text += "\nrun " + s.run_id + ", attempt " + s.attempt;
    if (!s.exit_status.empty()) text += ", exit status " + s.exit_status;
    if (!s.duration.empty()) text += ", " + duration_text(std::stoll(s.duration));
    // awk formats the cost it read back: the 4-decimal text, not the double it came from.
    if (!s.cost.empty()) text += ", $" + fixed(std::strtod(s.cost.c_str(), nullptr), 2);
    return text;
}

std::string joined_lines(const Safe& s) {
    std::string text;
    for (size_t i = 0; i < s.lines.size(); ++i) text += (i ? "\n" : "") + s.lines[i];
    return text;
}

std::string json_of(const Safe& s) {
    std::string lines;
    for (size_t i = 0; i < s.lines.size(); ++i)
        lines += (i ? ",\"" : "\"") + esc(s.lines[i]) + "\"";
    return "{\"id\":\"" + esc(s.run_id + "." + s.attempt + "." + s.event) + "\",\"event\":\"" +
           esc(s.event) + "\",\"model\":\"" + esc(s.model) + "\",\"run_id\":\"" + esc(s.run_id) +
           "\",\"attempt\":" + json_or_null(s.attempt) + ",\"host\":\"" + esc(s.host) +
           "\",\"reason\":\"" + esc(s.reason) +
           "\",\"exit_status\":" + json_or_null(s.exit_status) +
           ",\"duration_s\":" + json_or_null(s.duration) + ",\"cost\":" + json_or_null(s.cost) +
           ",\"last_lines\":[" + lines + "]}";
}

}  // namespace

const char* notify_event_name(NotifyEventKind kind) {
    switch (kind) {
        case NotifyEventKind::started:
            return "started";
        case NotifyEventKind::finished:
            return "finished";
        case NotifyEventKind::failed:
            return "failed";
        case NotifyEventKind::stopped:
            return "stopped";
        case NotifyEventKind::unattended_shutdown:
            return "unattended_shutdown";
        case NotifyEventKind::host_lost:
            return "host_lost";
        case NotifyEventKind::failover:
            return "failover";
        case NotifyEventKind::restarted:
            return "restarted";
    }
    return "started";
}

std::string notify_event_id(const NotifyEvent& event) {
    const Safe s = safe_of(event);
    return s.run_id + "." + s.attempt + "." + s.event;
}

std::string notify_event_json(const NotifyEvent& event) {
    return json_of(safe_of(event));
}

std::string notify_title(const NotifyEvent& event) {
    const Safe s = safe_of(event);
    std::string title = "mlt: " + s.model + " " + s.words;
    for (char& c : title)
        if (static_cast<unsigned char>(c) >= 0x80) c = '?';
    return title;
}

std::string notify_body(const NotifyEvent& event, NotifyFormat format) {
    const Safe s = safe_of(event);
    const std::string lines = joined_lines(s);
    switch (format) {
        case NotifyFormat::ntfy:
            return summary(s) + (s.lines.empty() ? "" : "\n\n" + lines);
        case NotifyFormat::slack: {
            const std::string title = "mlt: " + s.model + " " + s.words;
            const std::string text = "*" + amp(title) + "*\n" + amp(summary(s)) +
                                     (s.lines.empty() ? "" : "\n```\n" + amp(lines) + "\n```");
            return "{\"text\":\"" + esc(text) + "\"}";
        }
        case NotifyFormat::json:
            break;
    }
    return json_of(s);
}

std::string notify_fields_text(const NotifyEvent& event) {
    std::string text = "event=" + std::string(notify_event_name(event.event)) + "\n";
    text += "model=" + field_value(event.model) + "\n";
    text += "run_id=" + field_value(event.run_id) + "\n";
    text += "attempt=" + std::to_string(event.attempt) + "\n";
    text += "host=" + field_value(event.host) + "\n";
    text += "reason=" + field_value(event.reason) + "\n";
    text += "exit_status=" + (event.exit_status ? std::to_string(*event.exit_status) : "") + "\n";
    text += "duration_s=" + std::to_string(event.duration_s) + "\n";
    text += "cost=" + cost_text(event) + "\n";
    return text;
}

std::string notify_last_lines_text(const NotifyEvent& event) {
    std::string text;
    for (const auto& line : event.last_lines) {
        // A line handed over with its newline is one line, not two.
        const bool ended = !line.empty() && line.back() == '\n';
        text.append(line, 0, line.size() - (ended ? 1 : 0)) += "\n";
    }
    return text;
}

std::string notify_targets_text(const std::vector<NotifyTarget>& targets) {
    std::string text;
    for (const auto& t : targets)
        text += std::string(notify_format_name(t.format)) + " " + t.url + "\n";
    return text;
}

std::string notify_send_script(const NotifyTiming& timing) {
    return "mlt_notify_tries=" + std::to_string(timing.tries) +
           "\nmlt_notify_delay=" + std::to_string(timing.delay_s) +
           "\nmlt_notify_timeout=" + std::to_string(timing.timeout_s) + "\n" +
           std::string(scripts::job_notify_send);
}

}  // namespace mlt
