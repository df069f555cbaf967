// `mlt ssh ... train|logs|stop|download`: the flow of PRODUCT.md section 3 for one node.
#include "mlt/train/train_command.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>

#include "mlt/job/job.h"
#include "mlt/job/status.h"
#include "mlt/train/history.h"
#include "mlt/train/model.h"
#include "mlt/transfer/progress.h"
#include "mlt/transfer/sync.h"
#include "mlt/transfer/transfer.h"
#include "mlt/transfer/workspace.h"
#include "mlt/util/error.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/paths.h"
#include "mlt/util/sha256.h"
#include "mlt/util/shell.h"

namespace fs = std::filesystem;

namespace mlt {

namespace {

constexpr int kStopGraceSeconds = 10;

// Everything one command needs to know about the model and where its files go.
struct RunContext {
    ModelRef model;
    SshSettings settings;
    Target target;
    std::string remote_log_dir;
    std::string archive;  // relative to the remote dir
    std::string local_logs;
    std::string local_console;
    std::string local_archive;
};

RunContext prepare(const SshCommandLine& cli, const std::string& model_arg) {
    RunContext c;
    // model_paths come from the user settings; the model's own sidecar is read once the
    // spec is found.
    const SshSettings user = load_settings_for_command({});
    c.model = resolve_model(model_arg, user.model_paths);
    c.settings = load_settings_for_command(c.model.spec_path);
    auto targets = resolve_targets(cli, c.settings);
    if (targets.size() != 1)
        throw usage_error("several nodes (-h given " + std::to_string(targets.size()) +
                              " times) are not supported yet",
                          "give one -h");
    c.target = targets.front();
    const std::string& name = c.model.name;
    c.archive = name + ".mltk.zip";
    std::string log_dir = c.settings.remote_log_dir;
    // remote_log_dir placeholders are plain text substitutions: the result is one path.
    for (const auto& [key, value] :
         std::vector<std::pair<std::string, std::string>>{{"{model}", name},
                                                          {"{remote_dir}", c.target.remote_dir}})
        for (size_t at; (at = log_dir.find(key)) != std::string::npos;)
            log_dir.replace(at, key.size(), value);
    c.remote_log_dir = log_dir;
    c.local_logs = local_log_dir(name);
    c.local_console = c.local_logs + "/mlt_ssh_train_" + name + ".log";
    c.local_archive = c.model.spec_dir + "/" + c.archive;
    return c;
}

// A remote path from a `|` pair: absolute and `~` paths stand alone, others are relative to
// the remote dir.
std::string remote_path(const std::string& remote_dir, const std::string& path) {
    if (!path.empty() && (path[0] == '/' || path[0] == '~')) return path;
    return remote_dir + "/" + path;
}

std::string local_path(const std::string& base, const std::string& path) {
    std::string p = expand_user(path);
    return (!p.empty() && p[0] == '/') ? p : base + "/" + p;
}

// The uploads, grouped by remote base directory, all checked locally before any remote
// action: a missing file is an error before anything is sent.
std::map<std::string, std::vector<UploadItem>> plan_uploads(const RunContext& c,
                                                            const std::string& workspace) {
    std::map<std::string, std::vector<UploadItem>> plan;
    auto& in_dir = plan[c.target.remote_dir];
    in_dir.push_back({c.model.spec_path, c.model.spec_file});
    if (!workspace.empty()) {
        auto items = collect_workspace(workspace);
        std::printf("mlt: workspace %s: %zu file(s)\n", workspace.c_str(), items.size());
        in_dir.insert(in_dir.end(), items.begin(), items.end());
    }
    for (const auto& entry : c.settings.upload_files) {
        TransferSpec spec = parse_transfer_spec(entry, TransferDirection::upload);
        if (spec.is_glob) {
            auto items = expand_local_glob(c.model.spec_dir, spec.from);
            if (items.empty()) spdlog::warn("upload_files: '{}' matches no file in {}", entry, c.model.spec_dir);
            in_dir.insert(in_dir.end(), items.begin(), items.end());
            continue;
        }
        const std::string from = local_path(c.model.spec_dir, spec.from);
        const std::string to = remote_path(c.target.remote_dir, spec.to);
        const std::string base = fs::path(to).parent_path().string();
        const std::string name = fs::path(to).filename().string();
        if (fs::is_directory(from)) {
            for (auto& item : expand_local_glob(from, "**")) {
                item.remote_path = name + "/" + item.remote_path;
                plan[base].push_back(item);
            }
        } else if (fs::is_regular_file(from)) {
            plan[base].push_back({from, name});
        } else {
            throw config_error("upload_files: " + from + " (from '" + entry + "') not found",
                               "fix the path or remove the entry");
        }
    }
    // One remote path, one file: the first source wins (the spec, then the workspace, then
    // upload_files), so a spec inside the workspace is not sent twice.
    for (auto& [base, items] : plan) {
        std::set<std::string> seen;
        items.erase(std::remove_if(items.begin(), items.end(),
                                   [&](const UploadItem& i) { return !seen.insert(i.remote_path).second; }),
                    items.end());
    }
    return plan;
}

void print_to_terminal(std::string_view data) {
    std::fwrite(data.data(), 1, data.size(), stdout);
    std::fflush(stdout);
}

// Follows the console log into the terminal and the local copy, from the local copy's size
// so that no byte is shown twice (also across --resume).
void follow_console(Remote& remote, const RunContext& c, bool follow) {
    fs::create_directories(c.local_logs);
    std::error_code ec;
    uint64_t offset = fs::exists(c.local_console) ? fs::file_size(c.local_console, ec) : 0;
    std::ofstream local(c.local_console, std::ios::app | std::ios::binary);
    read_console(remote, c.target.remote_dir, c.model.name, offset, follow, [&](std::string_view d) {
        local.write(d.data(), static_cast<std::streamsize>(d.size()));
        local.flush();
        print_to_terminal(d);
    });
}

// The compression to use on this remote: the setting (whose words the settings reader
// checked), or none when the remote lacks its program. Asked when the first compressed
// stream is about to start, at most once per run (a warm run asks nothing).
CompressionChoice compression_for(Remote& remote, const SshSettings& settings) {
    auto known = std::make_shared<std::optional<Compression>>();
    return [&remote, &settings, known] {
        if (!*known)
            *known = usable_compression(
                remote, parse_compression(settings.compression).value_or(Compression::none));
        return **known;
    };
}

// Step 8: archive (checked against the remote sha256), log dir, download_files.
TransferStats collect(Remote& remote, const RunContext& c, const std::string& remote_sha,
                      const CompressionChoice& compression) {
    TransferStats total;
    const std::string remote_archive = c.target.remote_dir + "/" + c.archive;
    std::optional<uint64_t> archive_size;
    std::string local_sha;  // hashed as it arrives: no second pass over a big archive
    {
        TransferProgress progress("archive", 1, 0);
        archive_size = download_file_if_present(remote, remote_archive, c.local_archive,
                                                &progress, &local_sha);
        progress.dismiss();
    }
    if (archive_size) {
        total.bytes += *archive_size;
        total.files += 1;
        if (!remote_sha.empty()) {
            if (local_sha != remote_sha) {
                fs::remove(c.local_archive);
                throw Error(ErrorKind::remote, exit_code::kConnection,
                            "the downloaded archive does not match its remote sha256 (" +
                                local_sha + " vs " + remote_sha + ")",
                            "run 'mlt ssh ... download " + c.model.name + "' to fetch it again");
            }
        }
        std::printf("mlt: archive: %s\n", c.local_archive.c_str());
    } else {
        spdlog::warn("no archive {} on the remote", remote_archive);
    }

    // Only what is new or changed since the last pull (e.g. a --resume, or `download`).
    const SyncResult logs =
        sync_down(remote, remote_path(c.target.remote_dir, c.remote_log_dir), c.local_logs,
                  compression);
    total.files += logs.moved.files;
    total.bytes += logs.moved.bytes;
    std::printf("mlt: logs: %s: %s\n", c.local_logs.c_str(), describe(logs).c_str());

    std::vector<std::string> remote_files;
    bool listed = false;
    for (const auto& entry : c.settings.download_files) {
        TransferSpec spec = parse_transfer_spec(entry, TransferDirection::download);
        if (spec.is_glob) {
            if (!listed) remote_files = list_remote_files(remote, c.target.remote_dir);
            listed = true;
            std::vector<std::string> matched;
            for (const auto& f : remote_files)
                if (glob_match(spec.from, f)) matched.push_back(f);
            if (matched.empty()) {
                spdlog::warn("download_files: '{}' matches no remote file", entry);
                continue;
            }
            auto s = download(remote, c.target.remote_dir, matched, c.model.spec_dir, nullptr,
                              compression());
            total.files += s.files;
            total.bytes += s.bytes;
        } else {
            total.bytes += download_file(remote, remote_path(c.target.remote_dir, spec.from),
                                         local_path(c.model.spec_dir, spec.to));
            total.files += 1;
        }
    }
    return total;
}

// Step 9: shutdown_cmds, each in the remote dir with the settings' environment; a failure
// is reported, not fatal (the run's own status stands).
void run_shutdown(Remote& remote, const RunContext& c) {
    for (const auto& cmd : c.settings.shutdown_cmds) {
        spdlog::info("shutdown: {}", cmd);
        int status = remote.stream_login("cd " + shell_quote_path(c.target.remote_dir) + " && " +
                                             export_environment(c.settings.environment) + cmd,
                                         print_to_terminal, print_to_terminal);
        if (status != 0) spdlog::warn("shutdown command failed with exit status {}: {}", status, cmd);
    }
}

std::string local_owner() {
    char host[256] = "localhost";
    ::gethostname(host, sizeof host - 1);
    const char* user = std::getenv("USER");
    return std::string(user ? user : "user") + "@" + host + " pid " + std::to_string(::getpid());
}

std::string run_id() {
    std::random_device rd;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%lx-%04x", static_cast<long>(std::time(nullptr)), rd() & 0xffff);
    return buf;
}

std::string iso_time(std::time_t t) {
    char buf[32];
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// The command that picks this run up again, quoted for the user's shell. Settings-only
// values stay in the settings; a password is never echoed.
std::string resume_command(const SshCommandLine& cli, const std::string& model) {
    std::vector<std::string> words{"mlt", "ssh"};
    for (const auto& h : cli.hosts) words.insert(words.end(), {"-h", h});
    if (cli.port) words.insert(words.end(), {"-p", std::to_string(cli.port)});
    if (!cli.identity_file.empty()) words.insert(words.end(), {"-i", cli.identity_file});
    for (const auto& o : cli.ssh_options) words.insert(words.end(), {"-o", o});
    if (!cli.ssh_config.empty()) words.insert(words.end(), {"-F", cli.ssh_config});
    words.insert(words.end(), {"train", model, "--resume"});
    return shell_join(words);
}

Error conflict(std::string what, std::string hint) {
    return Error(ErrorKind::conflict, exit_code::kConflict, std::move(what), std::move(hint));
}

WrapperSpec wrapper_for(const RunContext& c, const TrainOptions& o) {
    WrapperSpec w;
    w.model = c.model.name;
    w.spec_file = c.model.spec_file;
    w.log_dir = c.remote_log_dir;
    w.archive = c.archive;
    w.clean = o.clean;
    w.verbose = o.verbose;
    w.environment = c.settings.environment;
    w.create_venv = c.settings.create_venv;
    w.venv_packages = c.settings.venv_packages;
    w.startup_cmds = c.settings.startup_cmds;
    w.train_cmd = fill_placeholders(c.settings.train_cmd, {{"model", c.model.name},
                                                           {"spec", c.model.spec_file},
                                                           {"log_dir", c.remote_log_dir},
                                                           {"archive", c.archive},
                                                           {"remote_dir", c.target.remote_dir}});
    // MLTK's own trainer takes these as flags; any other command reads MLT_CLEAN/MLT_VERBOSE.
    if (c.settings.train_cmd.rfind("mltk train", 0) == 0) {
        if (o.clean) w.train_cmd += " --clean";
        if (o.verbose) w.train_cmd += " --verbose";
    }
    w.train_args = o.args;
    return w;
}

}  // namespace

int run_train(const SshCommandLine& cli, const TrainOptions& o) {
    install_interrupt_handler();
    RunContext c = prepare(cli, o.model);
    std::string workspace = o.workspace.empty() ? std::string() : expand_user(o.workspace);
    if (workspace.empty() && !c.settings.workspace.empty())
        workspace = local_path(c.model.spec_dir, c.settings.workspace);
    auto uploads = plan_uploads(c, workspace);  // local checks before any remote action
    const std::string& name = c.model.name;
    const std::string& dir = c.target.remote_dir;

    Session session = Session::open(c.target.connect);
    SessionRemote remote(session);
    const std::time_t started = std::time(nullptr);
    nlohmann::json record = {{"id", run_id()}, {"model", name}, {"hosts", {remote.name()}},
                             {"remote_dir", dir}, {"start", iso_time(started)}};
    TransferStats up, down;

    bool attach = false;  // --resume of a running job
    bool collect_only = false;
    if (!acquire_lock(remote, dir, name, local_owner())) {
        auto jobs = query_jobs(remote, dir, name);
        const bool running = !jobs.empty() && jobs.front().state == JobState::running;
        if (o.resume) {
            attach = running;
            collect_only = !running;
        } else if (o.force) {
            if (running) std::printf("mlt: --force: stopping the running job of %s\n", name.c_str());
            stop_job(remote, dir, name, kStopGraceSeconds);
            discard_job(remote, dir, name);
            if (!acquire_lock(remote, dir, name, local_owner()))
                throw conflict("another mlt took the lock of " + name + " meanwhile", "try again");
        } else if (running) {
            throw conflict("model " + name + " already has a running job on " + remote.name(),
                           "--resume to reattach, or --force to stop it and start over");
        } else {
            throw conflict("model " + name + " has a finished job on " + remote.name() +
                               " whose results were not collected",
                           "--resume to collect them, or --force to discard them");
        }
    } else if (o.resume) {
        release_lock(remote, dir, name);
        throw conflict("no job of " + name + " to resume on " + remote.name(), "run without --resume");
    }

    bool interrupted = false;
    bool job_started = attach || collect_only;
    bool starting = false;
    int exit_status = -1;
    const CompressionChoice compression = compression_for(remote, c.settings);
    try {
        if (!attach && !collect_only) {
            if (o.clean) {
                std::error_code ec;
                fs::remove_all(c.local_logs, ec);
                fs::remove(c.local_archive, ec);
                remote.run("cd " + shell_quote_path(dir) + " && rm -rf " +
                           shell_quote_path(c.remote_log_dir) + " && rm -f " + shell_quote(c.archive));
                std::printf("mlt: --clean: removed local and remote logs and archive of %s\n", name.c_str());
            }
            const SyncResult sent = sync_up(remote, uploads, compression);
            up = sent.moved;
            std::printf("mlt: uploaded %s\n", describe(sent).c_str());
            // A new run: the local copy of the console log starts empty.
            fs::create_directories(c.local_logs);
            std::ofstream(c.local_console, std::ios::trunc);
            WrapperSpec w = wrapper_for(c, o);
            starting = true;  // from here on a job may exist, even if start_job throws
            long pgid = start_job(remote, dir, name, make_wrapper_script(w), w.train_cmd);
            job_started = true;
            std::printf("mlt: started %s on %s (process group %ld)\n", name.c_str(), remote.name().c_str(), pgid);
            if (o.no_wait) {
                std::printf("mlt: not waiting; reattach with: %s\n", resume_command(cli, o.model).c_str());
                return exit_code::kOk;
            }
        } else if (attach) {
            std::printf("mlt: reattaching to the running job of %s\n", name.c_str());
        } else {
            std::printf("mlt: collecting the finished job of %s\n", name.c_str());
        }

        try {
            follow_console(remote, c, true);
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::interrupted) throw;
            interrupted = true;
            acknowledge_interrupt();
            // A second Ctrl+C may already be here (two quick presses): that means leave.
            throw_if_interrupted();
            std::fprintf(stderr, "\nmlt: Ctrl+C: stopping the remote job, then collecting its results "
                                 "(Ctrl+C again to leave now and keep the job for --resume)\n");
            stop_job(remote, dir, name, kStopGraceSeconds);
            follow_console(remote, c, false);
        }
        auto [status, sha] = read_job_result(remote, dir, name);
        exit_status = status;
        down = collect(remote, c, sha, compression);
        run_shutdown(remote, c);
        release_lock(remote, dir, name);
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::interrupted && interrupted) {
            std::fprintf(stderr, "\nmlt: Ctrl+C again: leaving now; the remote job state stays: "
                                 "collect it later with --resume\n");
            record["status"] = "left";
            record["end"] = iso_time(std::time(nullptr));
            append_history(record);
            return exit_code::kInterrupted;
        }
        if (job_started && e.kind() != ErrorKind::interrupted && e.kind() != ErrorKind::disconnected) {
            // shutdown_cmds run after failures too (PRODUCT.md 3.9); the lock stays so that
            // --resume can collect again. The original error is the one reported.
            try {
                run_shutdown(remote, c);
            } catch (const Error& shutdown_error) {
                spdlog::warn("shutdown commands failed too: {}", shutdown_error.what());
            }
        }
        if (e.kind() == ErrorKind::interrupted && !job_started) {
            // Ctrl+C before the job ran: nothing to collect, so leave no lock behind.
            acknowledge_interrupt();
            std::fprintf(stderr, "\nmlt: Ctrl+C: nothing was started; lock released\n");
            release_lock(remote, dir, name);
        } else if (!starting && !job_started && e.kind() != ErrorKind::disconnected) {
            // Failed before the job was started (an upload): nothing to collect, so the next
            // run must not find a lock (exit 3). Best effort: the original error is the one
            // reported.
            try {
                release_lock(remote, dir, name);
            } catch (const Error& release_error) {
                spdlog::warn("could not release the lock: {}", release_error.what());
            }
        }
        throw;
    }

    int code = interrupted ? exit_code::kInterrupted : (exit_status < 0 ? 1 : exit_status);
    record["end"] = iso_time(std::time(nullptr));
    record["exit_status"] = exit_status;
    record["status"] = interrupted ? "stopped" : (exit_status == 0 ? "success" : "failed");
    record["bytes_up"] = up.bytes;
    record["bytes_down"] = down.bytes;
    record["cost"] = nullptr;
    append_history(record);
    std::printf("mlt: %s finished with exit status %d; console log: %s\n", name.c_str(),
                exit_status, c.local_console.c_str());
    return code;
}

int run_logs(const SshCommandLine& cli, const std::string& model, bool follow) {
    install_interrupt_handler();
    RunContext c = prepare(cli, model);
    Session session = Session::open(c.target.connect);
    SessionRemote remote(session);
    try {
        read_console(remote, c.target.remote_dir, c.model.name, 0, follow, print_to_terminal);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::interrupted) throw;
        return exit_code::kInterrupted;
    }
    return exit_code::kOk;
}

int run_stop(const SshCommandLine& cli, const std::string& model) {
    RunContext c = prepare(cli, model);
    Session session = Session::open(c.target.connect);
    SessionRemote remote(session);
    const bool stopped = stop_job(remote, c.target.remote_dir, c.model.name, kStopGraceSeconds);
    release_lock(remote, c.target.remote_dir, c.model.name);
    std::printf("mlt: %s\n", stopped ? ("stopped the job of " + c.model.name).c_str()
                                     : ("no running job of " + c.model.name + "; lock released").c_str());
    return exit_code::kOk;
}

int run_download(const SshCommandLine& cli, const std::string& model) {
    RunContext c = prepare(cli, model);
    Session session = Session::open(c.target.connect);
    SessionRemote remote(session);
    auto [status, sha] = read_job_result(remote, c.target.remote_dir, c.model.name);
    (void)status;
    follow_console(remote, c, false);
    collect(remote, c, sha, compression_for(remote, c.settings));
    return exit_code::kOk;
}

}  // namespace mlt
