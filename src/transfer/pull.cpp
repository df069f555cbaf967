// sync_down(): pulling a remote dir that a live training may still be writing.
//
// The files come into a private staging dir (`<local_base>/.mlt-pull`) and are published
// (renamed into place) only after a second look at the remote shows that nothing wrote to
// them while they were read: same inode, size, mtime and ctime. ctime cannot be set by a
// user and every write sets it, but only as fine as the file system's clock stamps it, so a
// file is read no earlier than 0.1 s after its ctime (on whole-second file systems: from the
// second after next); a file written just before the pull makes it wait that long first.
// Files that changed are fetched again, at
// most kRounds times in all; files that vanished are skipped; the rest of the pull completes
// either way and one line says what happened.

#include <fcntl.h>
#include <limits.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "internal.h"
#include "mlt/transfer/progress.h"
#include "mlt/transfer/ranges.h"
#include "mlt/transfer/sync.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/text.h"

namespace mlt {

using namespace transfer_detail;

namespace {

constexpr int kRounds = 3;
// Files fetched, checked and published together: what a pull holds beyond its listing.
constexpr size_t kBatch = 8192;
// A ctime this far ahead of the remote clock (a file server whose clock runs ahead) is not
// waited for any longer.
constexpr int64_t kMaxClockWait = 5000000000;
// How long after its ctime a file on a file system with sub-second timestamps may be read.
constexpr int64_t kFineSettle = 100000000;
// Names longer than this are shortened in messages.
constexpr size_t kShownName = 120;

std::string shown_name(const std::string& path) {
    if (path.size() <= kShownName) return "'" + printable(path) + "'";
    return "'" + printable(path.substr(0, kShownName - 40)) + "..." +
           printable(path.substr(path.size() - 37)) + "'";
}

std::string shown_names(const std::vector<std::string>& paths) {
    std::vector<std::string> shown;
    for (const auto& path : paths) shown.push_back(shown_name(path));
    return names_in_brief(shown);
}

// "<what> <n> file(s): names" parts of one warning line, joined with "; ".
struct Report {
    std::vector<std::string> parts;
    void add(const std::string& what, const std::vector<std::string>& paths) {
        if (!paths.empty())
            parts.push_back(what + " " + std::to_string(paths.size()) + ": " + shown_names(paths));
    }
    std::string text() const {
        std::string t;
        for (const auto& p : parts) t += (t.empty() ? "" : "; ") + p;
        return t;
    }
};

using Steady = std::chrono::steady_clock;

// The earliest remote time at which a file with this ctime may be read: a later write is
// then sure to set another ctime. File systems with sub-second timestamps stamp with a clock
// that lags by at most a tick (a few ms); the others (whole seconds) need the next second
// over.
int64_t readable_from(int64_t ctime_ns) {
    if (ctime_ns % 1000000000 != 0) return ctime_ns + kFineSettle;
    return (floor_seconds(ctime_ns) + 2) * 1000000000;
}

// Waits until the remote clock, which read `clock_ns` at some moment before `seen`, is
// surely at `ready_ns` (both clocks run at the same rate). A Ctrl+C ends the wait.
void wait_for_remote_clock(Steady::time_point seen, int64_t clock_ns, int64_t ready_ns) {
    const auto deadline = seen + std::chrono::nanoseconds(ready_ns - clock_ns);
    while (Steady::now() < deadline) {
        throw_if_interrupted();
        std::this_thread::sleep_for(
            std::min<Steady::duration>(deadline - Steady::now(), std::chrono::milliseconds(50)));
    }
    throw_if_interrupted();
}

// The first component of a relative path.
std::string first_part(const std::string& path) {
    return path.substr(0, path.find('/'));
}

class Pull {
  public:
    Pull(Remote& remote, const std::string& remote_base, const std::string& local_base,
         const std::vector<std::string>& own_names, PullReport shown, LinkPool* links,
         const ExpectedHashes* expected, const PullFilter& leave_out)
        : remote_(remote),
          remote_base_(remote_base),
          local_base_(local_base),
          shown_(shown),
          links_(links),
          expected_(expected),
          leave_out_(leave_out) {
        own_.insert(own_names.begin(), own_names.end());
        own_.insert(kPullStaging);
    }

    SyncResult run(const CompressionChoice& choose) {
        SyncResult result;
        std::vector<std::string> unlisted;
        int64_t clock = 0;
        // One copy of the listing, cut down in place to what is to be fetched; the rest is
        // held one batch at a time, so that a log dir of very many files costs little more
        // than its listing.
        std::vector<RemoteFileInfo> files =
            list_remote_file_info(remote_, remote_base_, &clock, &unlisted);
        seen_ = Steady::now();
        keep_copyable(files);
        if (leave_out_) result.held_back = hold_back(files);
        if (expected_) keep_recorded(files, result.unrecorded);
        const size_t copyable = files.size();
        const uint64_t bytes = keep_changed(files);
        result.unchanged = copyable - files.size();

        if (files.empty()) {
            // A pull cut off earlier left its staging dir; nothing of it is needed now.
            std::error_code ec;
            std::filesystem::remove_all(local_base_ + "/" + kPullStaging, ec);
        } else {
            check_free_space(local_base_, bytes);
            base_ = open_base(local_base_);
            staging_ = open_staging(base_.get(), local_base_, kPullStaging, staging_fd_);
            const auto start = Steady::now();
            TransferProgress progress("download", files.size(), bytes, mlt::reporter(),
                                      shown_ == PullReport::shown && stderr_is_terminal());
            try {
                for (size_t from = 0; from < files.size(); from += kBatch)
                    pull_batch(files, from, clock, choose, progress, result.moved);
            } catch (const Error& e) {
                // What a lying host sent is not kept for a resume: the staging dir goes.
                if (e.kind() == ErrorKind::tampered) {
                    std::error_code ec;
                    std::filesystem::remove_all(staging_, ec);
                }
                throw;
            }
            progress.dismiss();
            std::error_code ec;
            std::filesystem::remove_all(staging_, ec);  // what was not published
            result.seconds = std::chrono::duration<double>(Steady::now() - start).count();
        }
        report(unlisted);
        result.not_as_recorded = not_as_recorded_;
        result.held_back += held_back_;
        result.skipped = result.unrecorded.size() + not_as_recorded_.size() + vanished_.size() +
                         changing_.size() + unreadable_.size() + too_long_.size() +
                         in_the_way_.size() + unlisted.size();
        return result;
    }

  private:
    // Files [from, from + kBatch) of `files`: fetched and published, or fetched again while
    // they change (at most kRounds times in all).
    void pull_batch(std::vector<RemoteFileInfo>& files, size_t from, int64_t& clock,
                    const CompressionChoice& choose, TransferProgress& progress,
                    TransferStats& moved) {
        std::map<std::string, RemoteFileInfo> pending;
        const size_t end = std::min(files.size(), from + kBatch);
        for (size_t i = from; i < end; ++i) {
            RemoteFileInfo info = std::move(files[i]);
            std::string path = info.path;
            pending.emplace(std::move(path), std::move(info));
        }
        std::set<std::string> fetched_again;
        for (int round = 0; round < kRounds && !pending.empty(); ++round) {
            if (round > 0)
                for (const auto& [path, info] : pending) fetched_again.insert(path);
            fetch(pending, clock, choose, progress);
            pending = verify(pending, clock, moved);
        }
        for (const auto& [path, info] : pending) {
            changing_.push_back(path);
            fetched_again.erase(path);
        }
        for (const auto* skipped : {&vanished_, &unreadable_})
            for (const auto& path : *skipped) fetched_again.erase(path);
        again_.insert(again_.end(), fetched_again.begin(), fetched_again.end());
    }

    // Keeps the listed files that can be copied here: readable, and with a local path that
    // fits PATH_MAX (with the staging dir's name) and a remote one tar can open.
    void keep_copyable(std::vector<RemoteFileInfo>& files) {
        for (const auto& info : files) firsts_.insert(first_part(info.path));
        auto kept = std::remove_if(files.begin(), files.end(), [&](const RemoteFileInfo& info) {
            const size_t longest = std::max(local_name(info.path).size(), info.path.size());
            if (local_base_.size() + std::strlen(kPullStaging) + longest + 3 >= PATH_MAX ||
                info.path.size() + 3 >= PATH_MAX)
                too_long_.push_back(info.path);
            else if (!info.readable)
                unreadable_.push_back(info.path);
            else
                return false;
            return true;
        });
        files.erase(kept, files.end());
    }

    // Drops the files that leave_out_ names; returns how many.
    uint64_t hold_back(std::vector<RemoteFileInfo>& files) const {
        const size_t before = files.size();
        files.erase(std::remove_if(files.begin(), files.end(), leave_out_), files.end());
        return before - files.size();
    }

    // Keeps the files that the expected hashes name; the others go to `unrecorded`.
    void keep_recorded(std::vector<RemoteFileInfo>& files, std::vector<std::string>& unrecorded) {
        auto kept = std::remove_if(files.begin(), files.end(), [&](const RemoteFileInfo& info) {
            if (expected_->count(info.path)) return false;
            unrecorded.push_back(info.path);
            return true;
        });
        files.erase(kept, files.end());
    }

    // Keeps the files whose local copy is missing or differs in size or mtime; returns their
    // bytes.
    uint64_t keep_changed(std::vector<RemoteFileInfo>& files) {
        uint64_t bytes = 0;
        auto kept = std::remove_if(files.begin(), files.end(), [&](const RemoteFileInfo& info) {
            if (!local_copy_differs(local_base_ + "/" + local_name(info.path), info)) return true;
            bytes += info.size;
            return false;
        });
        files.erase(kept, files.end());
        files.shrink_to_fit();
        return bytes;
    }

    // The local path of a remote one: a first component that is one of mlt's own names gets
    // ".remote" (again, until it is no name of the listing either).
    std::string local_name(const std::string& path) const {
        const std::string first = first_part(path);
        if (!own_.count(first)) return path;
        std::string aside = first + ".remote";
        while (own_.count(aside) || firsts_.count(aside)) aside += ".remote";
        return aside + path.substr(first.size());
    }

    std::string staged(const std::string& path) const { return staging_ + "/" + path; }

    // Fetches the pending files into the staging dir: the big ones one by one, as ranges over the
    // links (resumable range by range), the rest as one tar stream; not before each one may be read
    // (readable_from).
    void fetch(const std::map<std::string, RemoteFileInfo>& pending, int64_t clock,
               const CompressionChoice& choose, TransferProgress& progress) {
        int64_t ready = 0;
        for (const auto& [path, info] : pending)
            ready = std::max(ready, readable_from(info.ctime_ns));
        if (ready > clock)
            wait_for_remote_clock(seen_, clock, std::min(ready, clock + kMaxClockWait));
        TarWanted small;
        for (const auto& [path, info] : pending) {
            // Only what arrives in this round counts. The names passed the gate when they
            // were listed; the directories on the way are opened without following a link.
            const std::vector<std::string> parts = split_path(path);
            UniqueFd dir = open_dirs(
                staging_fd_.get(), parts, parts.size() - 1, 0700, staging_,
                [&](const std::string& where) { return io_error(where + " is a symlink"); });
            ::unlinkat(dir.get(), parts.back().c_str(), 0);
            if (info.size < kResumableSize) {
                small.files[path] = info.size;
                continue;
            }
            try {
                RangeOptions options;
                options.links = links_;
                options.progress = &progress;
                const RangeStats stats = download_ranges(remote_, remote_base_ + "/" + path, info,
                                                         staged(path), options);
                looked_[path] = {stats.seen, stats.seen_clock_ns, Steady::now()};
            } catch (const StallError&) {
                throw;  // no link moved it: the pull cannot complete
            } catch (const Error& e) {
                // The file could not be read this time (e.g. its mode changed): the check
                // below decides. A lost link is another kind and goes up.
                if (e.kind() != ErrorKind::remote) throw;
                spdlog::debug("pulling {}: {}", path, e.what());
            }
        }
        if (small.files.empty()) return;
        std::string tar_messages;
        download_tar(remote_, remote_base_, std::move(small), staging_, &progress, choose(),
                     &tar_messages);
        if (!tar_messages.empty()) spdlog::debug("tar on {}: {}", remote_.name(), tar_messages);
    }

    // Publishes what arrived whole and unchanged; returns what is to be fetched again (with
    // what the remote shows now) and sets `clock` to the remote clock of this look. A file
    // that came in ranges was looked at once its ranges had moved (download_ranges): that
    // look stands, and a round trip is spared when it covers every file.
    std::map<std::string, RemoteFileInfo> verify(
        const std::map<std::string, RemoteFileInfo>& pending, int64_t& clock,
        TransferStats& moved) {
        std::vector<std::string> paths;
        std::map<std::string, RemoteFileInfo> now;
        for (const auto& [path, info] : pending) {
            auto look = looked_.find(path);
            if (look != looked_.end() && look->second.info.same_version(info)) {
                now[path] = look->second.info;
                now[path].path = path;
                clock = look->second.clock_ns;
                seen_ = look->second.when;
            } else {
                paths.push_back(path);
            }
        }
        looked_.clear();
        if (!paths.empty()) {
            for (auto& info : stat_remote_files(remote_, remote_base_, paths, &clock))
                now[info.path] = info;
            seen_ = Steady::now();
        }
        std::map<std::string, RemoteFileInfo> again;
        for (const auto& [path, listed] : pending) {
            auto it = now.find(path);
            if (it == now.end()) {
                vanished_.push_back(path);
            } else if (!it->second.readable) {
                unreadable_.push_back(path);
            } else if (it->second.same_version(listed) && arrived_whole(path, listed)) {
                if (expected_ && staged_sha256(staging_fd_.get(), path) != expected_->at(path)) {
                    not_as_recorded_.push_back(path);
                } else if (publish(path)) {
                    moved.files += 1;
                    moved.bytes += listed.size;
                }
            } else if (leave_out_ && leave_out_(it->second)) {
                ++held_back_;  // a new version the caller does not want (yet)
            } else {
                again[path] = it->second;
            }
        }
        return again;
    }

    bool arrived_whole(const std::string& path, const RemoteFileInfo& listed) const {
        struct stat st;
        return ::fstatat(staging_fd_.get(), path.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) == listed.size &&
               static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec ==
                   listed.mtime_ns;
    }

    // Renames the staged copy of `path` into its local place, never through a symlink. A
    // symlink or a directory in the way is reported and left as it is.
    bool publish(const std::string& path) {
        const std::string local = local_name(path);
        if (!publish_staged(staging_fd_.get(), path, base_.get(), local_base_, local)) {
            in_the_way_.push_back(local);
            return false;
        }
        if (local != path) aside_.push_back(shown_name(path) + " as " + shown_name(local));
        return true;
    }

    void report(const std::vector<std::string>& unlisted) {
        const std::string where = remote_.name() + ":" + remote_base_;
        Report live;
        live.add("fetched again (changed while read)", again_);
        live.add("skipped (vanished)", vanished_);
        live.add("skipped (kept changing)", changing_);
        const auto level = shown_ == PullReport::shown ? spdlog::level::warn : spdlog::level::debug;
        if (!live.parts.empty())
            spdlog::log(level, "pulling {} while it changed: {}", where, live.text());
        Report cannot;
        cannot.add("unreadable", unreadable_);
        cannot.add("path too long here", too_long_);
        cannot.add("a local symlink or directory in the way", in_the_way_);
        if (!cannot.parts.empty() || !unlisted.empty()) {
            std::string text = cannot.text();
            for (const auto& line : unlisted) text += (text.empty() ? "" : "; ") + line;
            spdlog::log(level, "skipped files of {} that cannot be copied here: {}", where, text);
        }
        if (!aside_.empty()) {
            std::string text;
            for (const auto& a : aside_) text += (text.empty() ? "" : ", ") + a;
            spdlog::log(level, "{} has files named like mlt's own local files; stored {}", where,
                        text);
        }
    }

    Remote& remote_;
    const std::string& remote_base_;
    const std::string& local_base_;
    const PullReport shown_;
    LinkPool* const links_;
    const ExpectedHashes* const expected_;
    const PullFilter& leave_out_;
    uint64_t held_back_ = 0;  // files leave_out_ dropped after they changed
    std::vector<std::string> not_as_recorded_;
    std::set<std::string> own_;     // names directly in local_base that are mlt's
    std::set<std::string> firsts_;  // first components of the listing
    UniqueFd base_;
    std::string staging_;
    UniqueFd staging_fd_;
    Steady::time_point seen_;  // when the last look at the remote (and its clock) came back
    // The look download_ranges took at a file of this round after its ranges moved.
    struct Look {
        RemoteFileInfo info;
        int64_t clock_ns = 0;
        Steady::time_point when;
    };
    std::map<std::string, Look> looked_;
    std::vector<std::string> again_, vanished_, changing_, unreadable_, too_long_, in_the_way_,
        aside_;
};

}  // namespace

SyncResult sync_down(Remote& remote, const std::string& remote_base, const std::string& local_base,
                     const CompressionChoice& choose, const std::vector<std::string>& own_names,
                     PullReport report, LinkPool* links, const ExpectedHashes* expected,
                     const PullFilter& leave_out) {
    return Pull(remote, remote_base, local_base, own_names, report, links, expected, leave_out)
        .run(choose);
}

}  // namespace mlt
