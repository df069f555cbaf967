#pragma once
// What the notification tests share: a temp dir with an event dir and a targets file, and "a
// host" whose only tools are a directory of chosen programs set as the whole PATH (as the issue
// asks: a host without X is made of chosen links, not of removed PATH entries). Every program
// there is a wrapper that appends its name, argv and exported environment to `argv.log` before
// it execs the real one, so a test can show that no URL reached any process.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "local_remote.h"
#include "mlt/job/notify.h"
#include "mlt/util/paths.h"
#include "mlt/util/process.h"

namespace mlt::test {

// The HTTP clients a test host may have.
enum class Client { curl, gnu_wget, python3, busybox_wget, none };

inline std::string client_name(Client c) {
    switch (c) {
        case Client::curl:
            return "curl";
        case Client::gnu_wget:
            return "wget";
        case Client::python3:
            return "python3";
        case Client::busybox_wget:
            return "busybox_wget";
        case Client::none:
            break;
    }
    return "none";
}

// The absolute path of `program` on this machine's PATH, or "" (the test that needs it fails).
inline std::string which(const std::string& program) {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    for (size_t start = 0; start <= dirs.size();) {
        size_t end = dirs.find(':', start);
        if (end == std::string::npos) end = dirs.size();
        const std::string candidate = dirs.substr(start, end - start) + "/" + program;
        if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
        start = end + 1;
    }
    return {};
}

// The event most tests send.
inline NotifyEvent sample_event() {
    NotifyEvent e;
    e.event = NotifyEventKind::finished;
    e.model = "mnist";
    e.run_id = "20240501-120000-ab12";
    e.attempt = 2;
    e.host = "root@gpu.example.com:22";
    e.exit_status = 0;
    e.duration_s = 3725;
    e.cost = 1.5;
    e.last_lines = {"epoch 9", "epoch 10 loss=0.01", "done"};
    return e;
}

class NotifyFixture {
  public:
    // `shell`: "dash" or "busybox" (then every tool is BusyBox's, as on a BusyBox-only host).
    NotifyFixture(const std::string& shell, Client client) : shell_(local_shell(shell)) {
        char tmpl[] = "/tmp/mlt-notify-test-XXXXXX";
        EXPECT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        std::filesystem::create_directories(dir_ + "/ev");
        std::filesystem::create_directories(dir_ + "/host");
        const bool busybox = shell == "busybox";
        const std::string bb = which("busybox");
        for (const char* tool : {"awk", "date", "sleep", "rm", "mkdir"})
            wrap(tool, busybox ? bb + " " + tool : which(tool));
        switch (client) {
            case Client::curl:
                wrap("curl", which("curl"));
                break;
            case Client::gnu_wget:
                wrap("wget", which("wget"));
                break;
            case Client::python3:
                // The system's python3 (a pyenv shim would need its own PATH).
                wrap("python3", "/usr/bin/python3");
                break;
            case Client::busybox_wget:
                wrap("wget", bb + " wget");
                break;
            case Client::none:
                break;
        }
    }
    ~NotifyFixture() { std::filesystem::remove_all(dir_); }
    NotifyFixture(const NotifyFixture&) = delete;
    NotifyFixture& operator=(const NotifyFixture&) = delete;

    const std::string& dir() const { return dir_; }
    std::string read(const std::string& rel) const {
        std::error_code ec;
        return std::filesystem::exists(dir_ + "/" + rel, ec) ? read_file(dir_ + "/" + rel) : "";
    }

    // The event dir's files, as LocalNotifier writes them (and a host's guard).
    void write_event(const NotifyEvent& e) const {
        write_file_atomic(dir_ + "/ev/fields", notify_fields_text(e), 0644);
        write_file_atomic(dir_ + "/ev/last_lines", notify_last_lines_text(e), 0644);
    }
    void write_targets(const std::vector<NotifyTarget>& targets) const {
        write_file_atomic(dir_ + "/targets", notify_targets_text(targets), 0600);
    }

    struct Result {
        int status = -1;
        std::string output;
    };
    // notify_send.sh (with `timing`) run by the test's shell with PATH the host dir only.
    Result run(const std::vector<std::string>& args, const NotifyTiming& timing = {4, 0, 10}) {
        write_file_atomic(dir_ + "/notify_send.sh", notify_send_script(timing), 0644);
        std::vector<std::string> argv{which("env"), "-i", "PATH=" + dir_ + "/host", "HOME=" + dir_};
        argv.insert(argv.end(), shell_.argv.begin(), shell_.argv.end());
        argv.push_back(dir_ + "/notify_send.sh");
        argv.insert(argv.end(), args.begin(), args.end());
        Result r;
        const ChildResult child =
            run_child(argv, std::chrono::seconds(120),
                      [&](const std::string& line) { r.output += line + "\n"; });
        EXPECT_TRUE(child.started && !child.timed_out) << r.output;
        r.status = child.exit_code;
        return r;
    }
    // `send` of the event dir to the targets file, the log and the sent file in the test dir.
    Result send(const NotifyTiming& timing = {4, 0, 10}) {
        return run({"send", dir_ + "/targets", dir_ + "/ev", dir_ + "/log", dir_ + "/sent"},
                   timing);
    }

  private:
    // host/NAME: appends "NAME ARGS..." and the exported environment to argv.log, then runs
    // `real` (a path, or "busybox APPLET").
    void wrap(const std::string& name, const std::string& real) {
        EXPECT_FALSE(real.empty()) << name << " is not installed (scripts/install-deps.sh)";
        const std::string path = dir_ + "/host/" + name;
        std::ofstream(path) << "#!/bin/sh\n{ printf '%s\\n' '" << name
                            << "' \"$@\"; export -p; } >> '" << dir_ << "/argv.log'\nexec " << real
                            << " \"$@\"\n";
        std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    }

    LocalShell shell_;
    std::string dir_;
};

}  // namespace mlt::test
