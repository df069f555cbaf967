// upload_ranges(): a local file sent in ranges into a remote partial file, resumable.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <sstream>
#include <tuple>

#include "internal.h"
#include "mlt/transfer/ranges.h"
#include "ranged_file.h"

namespace mlt {

using namespace transfer_detail;

namespace {

struct LocalVersion {
    uint64_t size = 0;
    int64_t mtime_ns = 0, ctime_ns = 0;
    uint64_t inode = 0;
    mode_t mode = 0644;
    bool operator==(const LocalVersion& o) const {
        return size == o.size && mtime_ns == o.mtime_ns && ctime_ns == o.ctime_ns &&
               inode == o.inode;
    }
};

LocalVersion local_version(int fd, const std::string& shown) {
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        throw io_error("cannot read " + shown + ": not a regular file");
    LocalVersion v;
    v.size = static_cast<uint64_t>(st.st_size);
    v.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    v.ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
    v.inode = st.st_ino;
    v.mode = st.st_mode & 0777;
    return v;
}

class Upload : public RangedFile<Upload> {
  public:
    static constexpr bool kUp = true;
    Upload(Remote& remote, const std::string& local_path, const std::string& remote_path,
           const RangeOptions& options)
        : RangedFile(remote, remote_path, local_path, options) {
        std::tie(dir_, partial_) = partial_beside(remote_path);
        hashes_ = partial_ + ".d";
    }

    // Opens the local file and cuts its ranges.
    void open() {
        fd_ = UniqueFd(::open(local_.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd_) throw io_error("cannot read " + local_ + ": " + std::strerror(errno));
        version_ = local_version(fd_.get(), local_);
        cut(version_.size);
    }

    RangeStats run() {
        const auto began = Steady::now();
        open();
        resume();
        for (int round = 1;; ++round) {
            move_missing();
            const LocalVersion now = local_version(fd_.get(), local_);
            if (now == version_) break;
            if (round >= kSourceRounds || now.size != version_.size)
                throw io_error("cannot upload " + local_ + ": it kept changing while it was sent",
                               "upload it again once nothing writes to it");
            version_ = now;
            for (const Range& r : ranges_)  // what changed is sent again
                if (done_.count(r.index) &&
                    local_range_hash(fd_.get(), r, local_) != done_[r.index]) {
                    done_.erase(r.index);
                    ++stats_.moved_again;
                }
        }
        finish();
        return log_done("pushed", local_, stats_, moved_.load(), began);
    }

    // A command that takes ranges from its stdin until it ends, each a header line (its
    // range_word) and its bytes: read off exactly (head -c reads no further than it writes)
    // into the partial file at its offset; then the sha256 of what landed goes into
    // <partial>.d/<index>.sha and, as "INDEX SHA256", to stderr. The next range is taken
    // from `dealer` once the last one's bytes are in the channel, so every channel stays
    // busy to the end: a command's ranges are not fixed when it starts.
    StreamJob stream_job(CommandRun& run, Dealer& dealer) {
        StreamJob job;
        job.command = receive_ranges_command(partial_, hashes_);
        job.input = [this, &run, &dealer, leg = size_t(0), head = std::string()](
                        char* buffer, size_t capacity) mutable -> size_t {
            Leg* now = current_leg(run, leg);
            if (!now) {
                const std::optional<Range> r = dealer.next();
                if (!r) return 0;
                now = &run.legs.emplace_back(*r);
            }
            if (!now->announced) {
                now->announced = true;
                head = range_word(now->range) + "\n";
            }
            if (!head.empty()) {  // the header line first (in pieces if need be)
                const size_t n = std::min(capacity, head.size());
                std::memcpy(buffer, head.data(), n);
                head.erase(0, n);
                return n;
            }
            const size_t n =
                read_at(fd_.get(), buffer, std::min<uint64_t>(capacity, now->end() - now->at),
                        now->at, local_);
            passed(*now, buffer, n);
            return n;
        };
        job.on_stderr = run.err.sink();
        job.on_taken = [this](uint64_t n) { taken_ += n; };
        job.data_stream = "the ranges sent to " + path_;
        return job;
    }

    Outcome judge(Remote& remote, Leg& leg, int status, const std::string& err) {
        return settle(remote, "writing", leg, status, err);
    }

    // Streams: each command takes its next range when it is ready for one.
    void move_on(Remote& remote, Dealer& dealer) {
        while (move_stream(*this, remote, dealer)) {
        }
    }

    // The remote command that prepares the partial file and lists the hashes of the ranges
    // an earlier attempt at this size left there (a range size or file size of their own:
    // those go).
    std::string resume_command() const {
        const std::string id =
            "mlt-ranges 2 " + std::to_string(version_.size) + " " + std::to_string(range_size_);
        return prepare_ranges_command(dir_, partial_, hashes_, id);
    }

  private:
    // The ranges an earlier attempt left remotely: each <index>.sha there names the hash of
    // what landed; a range counts as done when this file's bytes there hash the same.
    void resume() {
        const RemoteOutput got = remote_.run(resume_command());
        if (got.exit_status != 0)
            throw remote_failure(remote_, "preparing " + path_, got.exit_status, got.err);
        std::istringstream in(got.out);
        std::string line, hash;
        while (std::getline(in, line)) {
            std::istringstream words(line);
            size_t index = 0;
            if (line.rfind("cores ", 0) == 0) {
                words.ignore(6);
                words >> remote_cores_;
            } else if (words >> index >> hash && index < ranges_.size() && hash.size() == 64 &&
                       local_range_hash(fd_.get(), ranges_[index], local_) == hash) {
                done_[index] = hash;
            }
        }
        count_kept();
    }

    void finish() {
        const RemoteOutput got = remote_.run(
            finish_ranges_command(partial_, hashes_, version_.mtime_ns, version_.mode, path_));
        if (got.exit_status != 0)
            throw remote_failure(remote_, "writing " + path_, got.exit_status, got.err);
        if (progress()) progress()->file_done();
    }

    std::string hashes_;  // <partial>.d: the hash of each range that landed
    LocalVersion version_;
};

}  // namespace

RangeStats upload_ranges(Remote& remote, const std::string& local_path,
                         const std::string& remote_path, const RangeOptions& options) {
    return Upload(remote, local_path, remote_path, options).run();
}

void upload_ranges_ahead(Remote& remote, const std::string& local_path,
                         const std::string& remote_path, const RangeOptions& options) {
    Upload upload(remote, local_path, remote_path, options);
    upload.open();
    remote.run_ahead(upload.resume_command(), {});
}

}  // namespace mlt
