// download_ranges(): a remote file fetched in ranges into a partial file, resumable.

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <tuple>

#include "internal.h"
#include "mlt/transfer/ranges.h"
#include "mlt/util/text.h"
#include "ranged_file.h"

namespace mlt {

using namespace transfer_detail;

namespace {

class Download : public RangedFile<Download> {
  public:
    static constexpr bool kUp = false;  // the rate: what arrived is what moved
    Download(Remote& remote, const std::string& remote_path, const RemoteFileInfo& listed,
             const std::string& local_path, const RangeOptions& options)
        : RangedFile(remote, remote_path, local_path, options), listed_(listed) {
        std::tie(dir_, partial_) = partial_beside(local_path);
        state_ = partial_ + ".state";
    }

    RangeStats run() {
        const auto began = Steady::now();
        open_base(dir_);  // the destination's directory, created as needed
        for (int round = 1;; ++round) {
            cut(listed_.size);
            if (round == 1) open_partial();
            std::optional<Error> mismatch;
            try {
                move_missing();
            } catch (const Error& e) {
                if (e.kind() != ErrorKind::tampered) throw;
                mismatch = e;
            }
            const auto now = stat_remote_files(remote_, split_last(path_).first,
                                               {split_last(path_).second}, &stats_.seen_clock_ns);
            if (now.empty())
                throw remote_error("reading " + path_ + ": it vanished while it was read");
            // Ranges that kept arriving with other bytes than the remote hashed, from a file
            // that did not change: the remote sends one thing and vouches for another.
            if (mismatch && now.front().same_version(listed_)) throw *mismatch;
            if (mismatch)
                throw remote_error("reading " + path_ + ": it kept changing while it was read");
            stats_.seen = now.front();
            if (now.front().same_version(listed_)) break;
            if (round >= kSourceRounds)
                throw remote_error("reading " + path_ + ": it kept changing while it was read");
            recheck(now.front());
        }
        finish();
        return log_done("pulled", path_, stats_, moved_.load(), began);
    }

    // The run's ranges one after the other on stdout, each exactly its length (a file that
    // shrank is padded with zeros: its hash then differs), each followed by its sha256 read
    // from the file once more, on stderr.
    StreamJob job_for(CommandRun& run) {
        StreamJob job;
        std::vector<Range> ranges;
        for (const Leg& leg : run.legs) ranges.push_back(leg.range);
        job.command = send_ranges_command(token_, path_, ranges);
        job.on_stdout = [this, &run, leg = size_t(0)](std::string_view d) mutable {
            if (!run.begun && !(d = after_marker(run, d)).data()) return;
            while (!d.empty()) {
                Leg* now = current_leg(run, leg);
                if (!now)
                    throw remote_error("reading " + path_ +
                                       ": the remote sent more bytes than asked for");
                const size_t n =
                    static_cast<size_t>(std::min<uint64_t>(d.size(), now->end() - now->at));
                write_at(d.substr(0, n), now->at);
                passed(*now, d.data(), n);
                d.remove_prefix(n);
            }
        };
        job.on_stderr = run.err.sink();
        job.data_stream = "the ranges of " + path_;
        return job;
    }

    // The bytes of `d` after the command's marker line (what a login profile printed before
    // it is dropped); a null view while the marker has not come yet.
    std::string_view after_marker(CommandRun& run, std::string_view d) {
        run.preamble.append(d);
        const std::string marker = token_ + "\n";
        const size_t at = run.preamble.find(marker);
        if (at == std::string::npos) {
            if (run.preamble.size() > kMaxPreamble)
                throw remote_error("reading " + path_ +
                                       ": the remote printed more than 64 KiB before the "
                                       "command's output",
                                   "make the account's ~/.bashrc print nothing when it is not "
                                   "interactive");
            return {};
        }
        run.begun = true;
        if (at > 0)
            spdlog::debug("the login on {} printed first: {}", remote_.name(),
                          run.preamble.substr(0, std::min<size_t>(at, 200)));
        const size_t rest = run.preamble.size() - at - marker.size();
        run.preamble.clear();
        // The rest is the tail of `d` (the marker ended inside it).
        return rest == 0 ? std::string_view("", 0) : d.substr(d.size() - rest);
    }

    Outcome judge(Remote& remote, Leg& leg, int status, const std::string& err) {
        return settle(remote, "reading", leg, status, err, [&](const std::string& hash) {
            std::ofstream(state_, std::ios::app) << leg.range.index << " " << hash << "\n";
        });
    }

    // Batches of ranges, each command's fixed when it starts (its words in a `for` loop).
    void move_on(Remote& remote, Dealer& dealer) {
        for (std::vector<Range> b; !(b = dealer.batch()).empty();)
            move_batch(*this, remote, b, dealer);
    }

  private:
    // The partial file and the done ranges of an earlier attempt at this version (its
    // state file's first line is the version; a range line is "INDEX SHA256").
    void open_partial() {
        fd_ = UniqueFd(::open(partial_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!fd_ && errno == ELOOP) {  // a symlink in mlt's place: never written through
            ::unlink(partial_.c_str());
            fd_ =
                UniqueFd(::open(partial_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
        }
        if (!fd_) throw io_error("cannot write " + partial_ + ": " + std::strerror(errno));
        std::ifstream in(state_);
        std::string header;
        std::getline(in, header);
        if (header == version_line(listed_)) {
            size_t index = 0;
            std::string hash;
            while (in >> index >> hash)
                if (index < ranges_.size() && hash.size() == 64) done_[index] = hash;
        }
        write_state();
        // The file grows as ranges land (a partial file's size is how far it got); one of
        // another version starts empty. One that is empty already is not truncated: ext4
        // flushes a file truncated to 0 when it is closed (auto_da_alloc), and that close took
        // 0.24 s after a 1 GiB download here.
        struct stat st;
        if (done_.empty() && (::fstat(fd_.get(), &st) != 0 || st.st_size > 0) &&
            ::ftruncate(fd_.get(), 0) != 0)
            throw io_error("cannot write " + partial_ + ": " + std::strerror(errno));
        const uint64_t kept = count_kept();
        if (!done_.empty())
            spdlog::info("resumed {} after {} bytes kept ({} of {} ranges were there)", local_,
                         kept, done_.size(), ranges_.size());
    }

    std::string version_line(const RemoteFileInfo& f) const {
        return "mlt-ranges 2 " + std::to_string(f.size) + " " + std::to_string(f.mtime_ns) + " " +
               std::to_string(f.ctime_ns) + " " + std::to_string(f.inode) + " " +
               std::to_string(range_size_);
    }

    void write_state() {
        std::string text = version_line(listed_) + "\n";
        for (const auto& [index, hash] : done_) text += std::to_string(index) + " " + hash + "\n";
        const std::string tmp = state_ + ".tmp";
        {
            std::ofstream out(tmp, std::ios::trunc);
            out << text;
            if (!out.flush()) throw io_error("cannot write " + tmp);
        }
        if (::rename(tmp.c_str(), state_.c_str()) != 0)
            throw io_error("cannot write " + state_ + ": " + std::strerror(errno));
    }

    void write_at(std::string_view d, uint64_t at) {
        size_t put = 0;
        while (put < d.size()) {
            const ssize_t n =
                ::pwrite(fd_.get(), d.data() + put, d.size() - put, static_cast<off_t>(at + put));
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) throw io_error("cannot write " + partial_ + ": " + std::strerror(errno));
            put += static_cast<size_t>(n);
        }
    }

    // The source is another version now: ranges whose bytes are the same stay done.
    void recheck(const RemoteFileInfo& now) {
        std::map<size_t, std::string> keep;
        if (now.size == listed_.size)
            for (const auto& [index, hash] : remote_range_hashes(remote_, path_, ranges_))
                if (done_.count(index) && done_[index] == hash) keep[index] = hash;
        stats_.moved_again += done_.size() - keep.size();
        done_ = keep;
        listed_ = now;
        write_state();
    }

    void finish() {
        const timespec times[2] = {{0, UTIME_OMIT}, to_timespec(listed_.mtime_ns)};
        if (::ftruncate(fd_.get(), static_cast<off_t>(listed_.size)) != 0 ||
            ::futimens(fd_.get(), times) != 0 || ::rename(partial_.c_str(), local_.c_str()) != 0)
            throw io_error("cannot write " + local_ + ": " + std::strerror(errno));
        ::unlink(state_.c_str());
        if (progress()) progress()->file_done();
    }

    RemoteFileInfo listed_;
    std::string state_;
    const std::string token_ = random_token();  // the marker line before a command's ranges
};

}  // namespace

RangeStats download_ranges(Remote& remote, const std::string& remote_path,
                           const RemoteFileInfo& listed, const std::string& local_path,
                           const RangeOptions& options) {
    return Download(remote, remote_path, listed, local_path, options).run();
}

}  // namespace mlt
