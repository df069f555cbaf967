// LocalNotifier: a run's event sent from this machine, to the notify targets through
// notify_send.sh run with the local sh (the URLs in a 0600 file of a private temp dir, never in
// argv) and to notify_cmd with the event's JSON on stdin, each event id once.
#include <spdlog/spdlog.h>
#include <stdlib.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "mlt/job/notify.h"
#include "mlt/util/error.h"
#include "mlt/util/process.h"

namespace mlt {

namespace {

namespace fs = std::filesystem;

constexpr char kWarning[] = "mlt: warning: ";

// A directory only this user can read (mkdtemp makes it 0700), removed with this object.
class PrivateDir {
  public:
    PrivateDir() {
        std::string pattern = (fs::temp_directory_path() / "mlt-notify-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr)
            throw io_error("cannot create a temporary directory for a notification: " +
                           std::string(std::strerror(errno)));
        path_ = pattern;
    }
    ~PrivateDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    PrivateDir(const PrivateDir&) = delete;
    PrivateDir& operator=(const PrivateDir&) = delete;
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

// Writes `text` to a new file `path` with `mode` (0600: the targets, whose URLs are secrets).
void write_new(const std::string& path, const std::string& text, fs::perms mode) {
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << text;
        if (!out) throw io_error("cannot write " + path);
    }
    std::error_code ec;
    fs::permissions(path, mode, fs::perm_options::replace, ec);
    if (ec) throw io_error("cannot set the mode of " + path + ": " + ec.message());
}

// The most notify_send.sh may take: every target's tries, timeouts and waits, and a margin.
std::chrono::seconds send_bound(const LocalNotifier::Options& o) {
    long long per_target = 0;
    for (int k = 0, delay = o.timing.delay_s; k < o.timing.tries; ++k, delay *= 2)
        per_target += o.timing.timeout_s + 2 + (k + 1 < o.timing.tries ? delay : 0);
    return std::chrono::seconds(per_target * static_cast<long long>(o.targets.size()) + 30);
}

// What notify_send.sh's exit status and `mlt: warning:` lines say went wrong.
void read_send(const ChildResult& child, const std::vector<std::string>& lines,
               NotifyOutcome& outcome) {
    for (const auto& line : lines)
        if (line.rfind(kWarning, 0) == 0)
            outcome.problems.push_back(line.substr(sizeof kWarning - 1));
    if (!child.started) {
        outcome.problems.push_back("cannot run sh for the notification: " +
                                   std::string(std::strerror(child.start_errno)));
    } else if (child.timed_out) {
        outcome.problems.push_back("the notification's sender did not end in time");
    } else if (child.exit_code == notify_status::kSent) {
        return;
    } else if (child.exit_code != notify_status::kFailed &&
               child.exit_code != notify_status::kNoClient) {
        outcome.problems.push_back("the notification's sender ended with exit status " +
                                   std::to_string(child.exit_code));
    }
    outcome.sent = false;
}

// notify_cmd with the JSON file on stdin; its output goes to the debug log.
void run_notify_cmd(const std::string& cmd, const std::string& json_path, int timeout_s,
                    const std::atomic<bool>* stop, NotifyOutcome& outcome) {
    const ChildResult child = run_child_with_input(
        json_path, {"sh", "-c", cmd}, std::chrono::seconds(timeout_s),
        [](const std::string& line) { spdlog::debug("notify_cmd: {}", line); }, stop);
    std::string why;
    if (!child.started)
        why = "cannot run sh: " + std::string(std::strerror(child.start_errno));
    else if (child.timed_out)
        why = "it did not end within " + std::to_string(timeout_s) + " s (stopped)";
    else if (child.exit_code != 0)
        why = "exit status " + std::to_string(child.exit_code);
    if (why.empty()) return;
    outcome.problems.push_back("notify_cmd failed: " + why);
    outcome.sent = false;
}

}  // namespace

bool LocalNotifier::was_sent(const NotifyEvent& event) const {
    if (options_.sent_file.empty()) return false;
    std::ifstream in(options_.sent_file);
    const std::string id = notify_event_id(event);
    for (std::string line; std::getline(in, line);)
        if (line == id) return true;
    return false;
}

NotifyOutcome LocalNotifier::send(const NotifyEvent& event, const std::atomic<bool>* stop) {
    NotifyOutcome outcome;
    if (was_sent(event)) {
        outcome.already_sent = true;
        return outcome;
    }
    outcome.sent = true;
    if (options_.targets.empty() && options_.notify_cmd.empty()) return outcome;
    const PrivateDir dir;
    const std::string events = dir.path() + "/event";
    std::error_code ec;
    if (!fs::create_directory(events, ec))
        throw io_error("cannot create " + events + ": " + ec.message());
    write_new(events + "/fields", notify_fields_text(event),
              fs::perms::owner_read | fs::perms::owner_write);
    write_new(events + "/last_lines", notify_last_lines_text(event),
              fs::perms::owner_read | fs::perms::owner_write);
    if (!options_.targets.empty()) {
        const std::string targets = dir.path() + "/targets";
        write_new(targets, notify_targets_text(options_.targets),
                  fs::perms::owner_read | fs::perms::owner_write);
        const std::string script = dir.path() + "/notify_send.sh";
        write_new(script, "mlt_notify_here='this machine'\n" + notify_send_script(options_.timing),
                  fs::perms::owner_read | fs::perms::owner_write);
        std::string log = options_.log_file.empty() ? dir.path() + "/log" : options_.log_file;
        if (const fs::path parent = fs::path(log).parent_path(); !parent.empty())
            fs::create_directories(parent, ec);
        std::vector<std::string> lines;
        const ChildResult child = run_child(
            {"sh", script, "send", targets, events, log}, send_bound(options_),
            [&](const std::string& line) { lines.push_back(line); }, stop);
        read_send(child, lines, outcome);
    }
    if (!options_.notify_cmd.empty()) {
        const std::string json = dir.path() + "/event.json";
        write_new(json, notify_event_json(event), fs::perms::owner_read | fs::perms::owner_write);
        run_notify_cmd(options_.notify_cmd, json, options_.cmd_timeout_s, stop, outcome);
    }
    // Cut short: a later attachment tries it again.
    if ((stop && *stop) || options_.sent_file.empty()) return outcome;
    if (const fs::path parent = fs::path(options_.sent_file).parent_path(); !parent.empty())
        fs::create_directories(parent, ec);
    std::ofstream out(options_.sent_file, std::ios::app);
    out << notify_event_id(event) << "\n";
    out.flush();
    if (!out) throw io_error("cannot write " + options_.sent_file);
    return outcome;
}

}  // namespace mlt
