// The rows of the notification keys of `ssh:` (notify, notify_cmd, notify_from) and of one
// `notify` target.
#include <string>
#include <utility>

#include "settings_rows.h"

namespace mlt::settings_detail {

using namespace rows;

namespace {

void apply_notify_from(Value&& value, SshSettings& settings) {
    settings.notify_from =
        std::get<std::string>(value) == "laptop" ? NotifyFrom::laptop : NotifyFrom::host;
}

}  // namespace

std::vector<FieldDecl> notify_fields() {
    using S = SshSettings;
    return {
        special("notify", SettingType::notify_targets, "`[]`",
                "[{url: \"https://ntfy.sh/my-runs\", format: ntfy}]",
                "webhooks told of the run's events (started, finished, failed, stopped, "
                "unattended_shutdown, host_lost, failover, restarted), each once per run and "
                "attempt, with retries; each target `{url: http(s) URL, format: json|ntfy|slack}`. "
                "A URL is a secret: mlt never prints it, and with `notify_from: host` it sits "
                "in a 0600 file of the job dir, which the host's root can read "
                "(docs/usage.md, \"Notifications\"). A higher layer's list replaces a lower one's",
                &assign<&S::notify>),
        text("notify_cmd", "none", "\"cat >> ~/mlt-events.jsonl\"",
             "local command (run with `sh -c`, at most 60 s) that gets each event's JSON object "
             "on its standard input, once per event, from an attached mlt",
             &assign<&S::notify_cmd>),
        choice("notify_from", {"host", "laptop"}, "`host`", "host",
               "who sends the events that happen on the host: `host`, its guard (with curl, "
               "GNU wget or python3 there), whether or not an mlt is attached; `laptop`, only an "
               "attached mlt (the URLs never go to the host)",
               &apply_notify_from),
    };
}

const std::vector<FieldDecl>& notify_target_fields() {
    static const std::vector<FieldDecl> kFields = [] {
        FieldDecl url = text("url", "none", "\"https://ntfy.sh/my-runs\"",
                             "the webhook: `http://` or `https://`, no blanks (a secret: never "
                             "printed, shown as `https://host/…`)",
                             nullptr);
        url.non_empty = true;
        return std::vector<FieldDecl>{
            url,
            choice("format", {"json", "ntfy", "slack"}, "`json`", "slack",
                   "the body: `json` one object (the event's fields), `ntfy` a text POST with a "
                   "`Title:` header, `slack` `{\"text\": ...}` (an incoming webhook)",
                   nullptr),
        };
    }();
    return kFields;
}

}  // namespace mlt::settings_detail
