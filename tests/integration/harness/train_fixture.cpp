#include "harness/train_fixture.h"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <climits>
#include <cstdlib>

#include "harness/files.h"
#include "harness/openssh.h"
#include "harness/time_factor.h"

namespace mlt_test {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kPollInterval{20};
const std::chrono::seconds kLeftoverTimeout = scaled(std::chrono::seconds{5});

// The numeric entries of /proc.
std::vector<long> all_pids() {
    std::vector<long> pids;
    DIR* dir = opendir("/proc");
    if (dir == nullptr) return pids;
    while (const dirent* entry = readdir(dir)) {
        char* end = nullptr;
        long pid = std::strtol(entry->d_name, &end, 10);
        if (end != entry->d_name && *end == '\0') pids.push_back(pid);
    }
    closedir(dir);
    return pids;
}

// State letter and process group of /proc/<pid>/stat; false when it is gone.
bool stat_of(long pid, char* state, long* pgrp) {
    std::string stat = read_or_empty("/proc/" + std::to_string(pid) + "/stat");
    // "pid (comm) S ppid pgrp ...": comm may contain anything, so parse after the last ')'.
    auto close = stat.rfind(')');
    if (close == std::string::npos) return false;
    std::vector<std::string> fields = split_fields(stat.substr(close + 1));
    if (fields.size() < 3) return false;
    *state = fields[0][0];
    *pgrp = std::strtol(fields[2].c_str(), nullptr, 10);
    return true;
}

std::string cmdline_of(long pid) {
    std::string cmd = read_or_empty("/proc/" + std::to_string(pid) + "/cmdline");
    for (char& c : cmd) {
        if (c == '\0') c = ' ';
    }
    return trim(cmd);
}

std::string cwd_of(long pid) {
    char buf[PATH_MAX];
    const std::string link = "/proc/" + std::to_string(pid) + "/cwd";
    ssize_t n = readlink(link.c_str(), buf, sizeof buf - 1);
    if (n <= 0) return {};
    return std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace

bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        if (condition()) return true;
        if (Clock::now() >= deadline) return false;
        poll(nullptr, 0, static_cast<int>(kPollInterval.count()));
    }
}

std::string read_or_empty(const std::string& path) {
    try {
        return read_file(path);
    } catch (const std::exception&) {
        return {};  // missing or unreadable: the callers treat both as "not there (yet)"
    }
}

bool process_alive(long pid) {
    char state = 0;
    long pgrp = 0;
    return pid > 0 && stat_of(pid, &state, &pgrp) && state != 'Z' && state != 'X';
}

std::vector<long> group_members(long pgid) {
    std::vector<long> members;
    if (pgid <= 0) return members;
    for (long pid : all_pids()) {
        char state = 0;
        long pgrp = 0;
        if (stat_of(pid, &state, &pgrp) && pgrp == pgid && state != 'Z' && state != 'X') {
            members.push_back(pid);
        }
    }
    return members;
}

std::vector<std::string> processes_in(const std::string& dir) {
    std::vector<std::string> found;
    for (long pid : all_pids()) {
        const std::string cwd = cwd_of(pid);
        if (cwd != dir && cwd.rfind(dir + "/", 0) != 0) continue;
        if (!process_alive(pid)) continue;
        found.push_back(std::to_string(pid) + " " + cmdline_of(pid));
    }
    return found;
}

std::vector<std::string> processes_naming(const std::string& dir) {
    std::vector<std::string> found;
    for (long pid : all_pids()) {
        const std::string cwd = cwd_of(pid);
        const std::string cmdline = cmdline_of(pid);
        const bool in = cwd == dir || cwd.rfind(dir + "/", 0) == 0;
        if ((!in && cmdline.find(dir + "/") == std::string::npos) || !process_alive(pid)) continue;
        found.push_back(std::to_string(pid) + " " + cmdline);
    }
    return found;
}

std::size_t count_lines(const std::string& text, const std::string& line) {
    std::size_t n = 0;
    for (const auto& l : split_lines(text)) n += l == line ? 1 : 0;
    return n;
}

std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
    std::vector<std::string> found;
    for (const auto& l : split_lines(text)) {
        if (l.rfind(prefix, 0) == 0) found.push_back(l);
    }
    return found;
}

::testing::AssertionResult each_epoch_once(const std::string& text, int epochs) {
    const auto lines = lines_starting(text, "epoch ");
    std::string problems;
    for (int i = 1; i <= epochs; ++i) {
        const std::string prefix =
            "epoch " + std::to_string(i) + "/" + std::to_string(epochs) + " ";
        const std::size_t n = lines_starting(text, prefix).size();
        if (n != 1) problems += "'" + prefix + "' " + std::to_string(n) + " times; ";
    }
    if (lines.size() != static_cast<std::size_t>(epochs)) {
        problems += std::to_string(lines.size()) + " epoch lines instead of " +
                    std::to_string(epochs) + "; ";
    }
    if (problems.empty()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << problems << "in:\n" << text;
}

std::string sha256_of(const std::string& path) {
    ProcessResult r = run_process({"sha256sum", path}, tool_environment(), kToolTimeout);
    if (r.exit_code != 0) return {};
    auto fields = split_fields(r.out);
    return fields.empty() ? std::string() : fields[0];
}

namespace {

// A small reader for the flat records of history.jsonl; any syntax error gives false.
class JsonScanner {
  public:
    explicit JsonScanner(const std::string& text) : s_(text) {}

    bool record(JsonRecord* out) {
        if (!expect('{')) return false;
        if (peek() == '}') return ++i_, at_end();
        for (;;) {
            std::string key, value;
            if (!string(&key) || !expect(':') || !value_text(&value)) return false;
            (*out)[key] = value;
            if (peek() == ',') {
                ++i_;
                continue;
            }
            return expect('}') && at_end();
        }
    }

  private:
    char peek() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
        return i_ < s_.size() ? s_[i_] : '\0';
    }
    bool expect(char c) {
        if (peek() != c) return false;
        ++i_;
        return true;
    }
    bool at_end() { return peek() == '\0'; }
    bool string(std::string* out) {
        if (!expect('"')) return false;
        while (i_ < s_.size() && s_[i_] != '"') {
            char c = s_[i_++];
            if (c == '\\' && i_ < s_.size()) {
                char e = s_[i_++];
                c = e == 'n' ? '\n' : e == 't' ? '\t' : e;  // \uXXXX is not needed here
            }
            out->push_back(c);
        }
        return i_++ < s_.size();
    }
    // A value: strings unescaped; anything else as its text up to the next top-level , or }.
    bool value_text(std::string* out) {
        if (peek() == '"') return string(out);
        int depth = 0;
        bool in_string = false;
        std::size_t start = i_;
        for (; i_ < s_.size(); ++i_) {
            char c = s_[i_];
            if (in_string) {
                if (c == '\\')
                    ++i_;
                else if (c == '"')
                    in_string = false;
            } else if (c == '"') {
                in_string = true;
            } else if (c == '[' || c == '{') {
                ++depth;
            } else if (c == ']' || c == '}') {
                if (depth == 0) break;
                --depth;
            } else if (c == ',' && depth == 0) {
                break;
            }
        }
        *out = trim(s_.substr(start, i_ - start));
        return !out->empty();
    }

    const std::string& s_;
    std::size_t i_ = 0;
};

}  // namespace

JsonRecord parse_json_record(const std::string& line) {
    JsonRecord record;
    if (!JsonScanner(line).record(&record)) record.clear();
    return record;
}

void TrainTest::SetUp() {
    SshTest::SetUp();
    make_dir(project(), 0755);
    make_dir(remote_logs_root(), 0755);
    trust_server_in(default_known_hosts());
}

void TrainTest::TearDown() {
    kill_leftovers();
    SshTest::TearDown();
}

void TrainTest::kill_leftovers() const {
    // Remote jobs run detached (setsid) under sshd as the test's own user: kill their
    // groups and anything else still working in the temp dir, then wait until gone.
    for (int round = 0; round < 2; ++round) {
        if (DIR* dir = opendir((remote() + "/.mlt").c_str())) {
            while (const dirent* entry = readdir(dir)) {
                const std::string name = entry->d_name;
                if (name == "." || name == "..") continue;
                long pgid = job_pgid(name);
                if (pgid > 1) kill(static_cast<pid_t>(-pgid), SIGKILL);
            }
            closedir(dir);
        }
        for (const auto& p : processes_in(sshd().dir())) {
            kill(static_cast<pid_t>(std::strtol(p.c_str(), nullptr, 10)), SIGKILL);
        }
    }
    wait_until([&] { return processes_in(sshd().dir()).empty(); }, kLeftoverTimeout);
}

std::string TrainTest::project() const {
    return sshd().dir() + "/project";
}

std::string TrainTest::remote_logs_root() const {
    return sshd().dir() + "/remote-logs";
}

std::string TrainTest::job_dir(const std::string& model) const {
    return remote() + "/.mlt/" + model;
}

std::string TrainTest::job_file(const std::string& model, const std::string& name) const {
    return job_dir(model) + "/" + name;
}

std::string TrainTest::local_logs(const std::string& model) const {
    return env().home() + "/.mltk/models/" + model;
}

std::string TrainTest::local_console(const std::string& model) const {
    return local_logs(model) + "/mltk_ssh_train_" + model + ".log";
}

std::string TrainTest::local_archive(const std::string& model) const {
    return project() + "/" + model + ".mltk.zip";
}

std::string TrainTest::history_path() const {
    return env().home() + "/.mltk/ssh/history.jsonl";
}

void TrainTest::copy_example(const std::string& stem) const {
    const std::string source =
        read_file(std::string(MLT_SOURCE_DIR) + "/examples/basic/logistic_model.py");
    write_file(project() + "/" + stem + ".py", source, 0644);
}

void TrainTest::write_shell_model(const std::string& stem, const std::string& script) const {
    write_file(project() + "/" + stem + ".py", script, 0644);
}

void TrainTest::write_model_settings(const std::string& stem, const std::string& yaml) const {
    write_file(project() + "/" + stem + ".ssh.yaml", yaml, 0644);
}

std::string TrainTest::base_settings(bool connection) const {
    std::string yaml = "ssh:\n";
    yaml += "  remote_dir: \"" + remote() + "\"\n";
    yaml += "  remote_log_dir: \"" + remote_logs_root() + "/{model}\"\n";
    if (connection) {
        yaml += "  connection:\n";
        yaml += "    hostname: 127.0.0.1\n";
        yaml += "    port: " + std::to_string(sshd().port()) + "\n";
        yaml += "    username: " + sshd().user() + "\n";
        yaml += "    key_filename: \"" + sshd().client_key_path() + "\"\n";
    }
    return yaml;
}

void TrainTest::write_user_settings(const std::string& extra) const {
    env().write_settings(base_settings(true) + extra);
}

ProcessResult TrainTest::mlt(const std::vector<std::string>& args,
                             std::chrono::milliseconds timeout) const {
    // run_process has no working directory: a shell changes into the project, then execs.
    std::vector<std::string> argv = {"/bin/sh", "-c",      "cd \"$1\" && shift && exec \"$@\"",
                                     "sh",      project(), env().binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return env().run(argv, timeout);
}

std::unique_ptr<BackgroundProcess> TrainTest::start_mlt(
    const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {env().binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return std::make_unique<BackgroundProcess>(argv, env().vars(), project());
}

long TrainTest::job_pgid(const std::string& model) const {
    return std::strtol(read_or_empty(job_file(model, "pid")).c_str(), nullptr, 10);
}

int TrainTest::job_exit_status(const std::string& model) const {
    const std::string text = trim(read_or_empty(job_file(model, "exit_status")));
    if (text.empty()) return -1;
    return static_cast<int>(std::strtol(text.c_str(), nullptr, 10));
}

::testing::AssertionResult TrainTest::wait_job_finished(const std::string& model) const {
    if (wait_until([&] { return job_exit_status(model) >= 0; }, kEffectTimeout)) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure()
           << "the job of " << model << " did not finish; " << job_state(model);
}

::testing::AssertionResult TrainTest::wait_console(const std::string& model,
                                                   const std::string& text) const {
    const std::string path = job_file(model, "console.log");
    if (wait_until([&] { return read_or_empty(path).find(text) != std::string::npos; },
                   kEffectTimeout)) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure()
           << "the remote console log never showed '" << text << "'; " << job_state(model);
}

::testing::AssertionResult TrainTest::wait_group_gone(long pgid) const {
    if (pgid <= 1) return ::testing::AssertionFailure() << "no process group id (" << pgid << ")";
    if (wait_until([&] { return group_members(pgid).empty(); }, kEffectTimeout)) {
        return ::testing::AssertionSuccess();
    }
    std::string left;
    for (long pid : group_members(pgid)) left += std::to_string(pid) + " " + cmdline_of(pid) + "\n";
    return ::testing::AssertionFailure() << "process group " << pgid << " still has:\n" << left;
}

::testing::AssertionResult TrainTest::wait_pids_gone(const std::string& pid_file) const {
    std::vector<long> pids;
    for (const auto& line : split_lines(read_or_empty(pid_file))) {
        long pid = std::strtol(line.c_str(), nullptr, 10);
        if (pid > 1) pids.push_back(pid);
    }
    if (pids.empty()) return ::testing::AssertionFailure() << "no pids in " << pid_file;
    auto none_alive = [&] {
        for (long pid : pids) {
            if (process_alive(pid)) return false;
        }
        return true;
    };
    if (wait_until(none_alive, kEffectTimeout)) return ::testing::AssertionSuccess();
    std::string left;
    for (long pid : pids) {
        if (process_alive(pid)) left += std::to_string(pid) + " " + cmdline_of(pid) + "\n";
    }
    return ::testing::AssertionFailure() << "still alive:\n" << left;
}

::testing::AssertionResult TrainTest::wait_no_remote_processes() const {
    if (wait_until([&] { return processes_in(remote()).empty(); }, kEffectTimeout)) {
        return ::testing::AssertionSuccess();
    }
    std::string left;
    for (const auto& p : processes_in(remote())) left += p + "\n";
    return ::testing::AssertionFailure() << "processes still running in the remote dir:\n" << left;
}

std::vector<JsonRecord> TrainTest::history() const {
    // As `mlt jobs` reads it: a run appends a record when it starts and when it ends; the
    // newest record of an id stands for the run, in the place of its first.
    std::vector<JsonRecord> runs;
    std::map<std::string, std::size_t> where;
    for (const auto& line : split_lines(read_or_empty(history_path()))) {
        if (trim(line).empty()) continue;
        JsonRecord record = parse_json_record(line);
        const std::string id = record.count("id") ? record.at("id") : std::string();
        auto [it, added] = where.emplace(id, runs.size());
        if (added || id.empty())
            runs.push_back(std::move(record));
        else
            runs[it->second] = std::move(record);
    }
    return runs;
}

std::string TrainTest::job_state(const std::string& model) const {
    std::string text = "remote .mlt of " + model + ":";
    for (const char* name : {"lock", "pid", "exit_status", "sha256", "cmd"}) {
        const std::string path = job_file(model, name);
        text += std::string("\n  ") + name + ": " +
                (path_exists(path) ? "'" + trim(read_or_empty(path)) + "'" : "(absent)");
    }
    text += "\n  console.log:\n" + read_or_empty(job_file(model, "console.log"));
    return text;
}

::testing::AssertionResult TrainTest::valid_zip(const std::string& path) const {
    ProcessResult r = run_process({"/usr/bin/python3", "-m", "zipfile", "-t", path},
                                  tool_environment(), kToolTimeout);
    if (r.exit_code == 0 && !path_exists(path + ".tmp")) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << path << " is not a valid zip: " << describe(r);
}

std::string TrainTest::zip_listing(const std::string& path) const {
    return run_process({"/usr/bin/python3", "-m", "zipfile", "-l", path}, tool_environment(),
                       kToolTimeout)
        .out;
}

}  // namespace mlt_test
