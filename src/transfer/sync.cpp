// sync_up / sync_down: the comparison, the size summary and the progress line around the
// plain transfers of tar_upload.cpp, tar_download.cpp and file_download.cpp.

#include "mlt/transfer/sync.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <memory>
#include <optional>
#include <thread>

#include "channel_cost.h"
#include "commands.h"
#include "internal.h"
#include "mlt/transfer/progress.h"
#include "mlt/transfer/ranges.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/shell.h"
#include "remote_scripts.h"

namespace mlt {

namespace {

// The links of a pool but its first, which another thread uses meanwhile.
class LinksAfterFirst : public LinkPool {
  public:
    explicit LinksAfterFirst(LinkPool& inner) : inner_(inner) {}
    size_t limit() const override { return inner_.limit() - 1; }
    bool tuning() const override { return inner_.tuning(); }
    Remote* link(size_t i) override { return inner_.link(i + 1); }
    void drop(size_t i) override { inner_.drop(i + 1); }

  private:
    LinkPool& inner_;
};

// The tar streams of one upload on the pool's first link, in a thread of its own, while the
// caller sends the big files in ranges over its own link and the others: over a far link
// both are bound by windows, so side by side they take the time of the longer one. A link
// the server refuses leaves the streams to the caller (done() is false then). `streams`
// must outlive it.
class StreamsBeside {
  public:
    StreamsBeside(LinkPool& links, const std::string& base,
                  const std::vector<UploadStream>& streams, TransferProgress& progress)
        : rest_(links), streams_(streams) {
        const std::atomic<bool>* stop = current_stop();
        thread_ = thread_without_signals([this, &links, base, &progress, stop] {
            std::unique_ptr<StopScope> scope;
            if (stop) scope = std::make_unique<StopScope>(*stop);
            try {
                Remote* side = links.link(0);
                if (!side) return;
                spdlog::debug(
                    "{} tar stream(s) go beside the ranges, over a connection of their own",
                    streams_.size());
                stats_ = upload_streams(*side, base, streams_, &progress);
                done_ = true;
            } catch (...) {
                error_ = std::current_exception();
            }
        });
    }
    ~StreamsBeside() {
        if (thread_.joinable()) thread_.join();
    }
    // The links the ranges may use meanwhile.
    LinkPool* rest() { return &rest_; }
    // Waits for the streams; rethrows their error. False when they did not go.
    bool done(TransferStats& stats) {
        thread_.join();
        if (error_) std::rethrow_exception(error_);
        stats = stats_;
        return done_;
    }

  private:
    LinksAfterFirst rest_;
    const std::vector<UploadStream>& streams_;
    TransferStats stats_;
    bool done_ = false;
    std::exception_ptr error_;
    std::thread thread_;
};

using Clock = std::chrono::steady_clock;

// A round trip this long is worth sparing by sending a big file's preparing command with the
// small files' stream. Below it the preparing command goes first, on its own (the order
// measured over loopback at 359-376 MB/s up). This bound came in while the first measure of
// a link could be a channel open that waited 40 ms for a delayed ACK over loopback; the
// authentication service's answer measures it cleanly now (Connector::open).
constexpr double kLongRoundTrip = 0.05;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

uint64_t local_size(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// Whether `bytes` in `streams` tar streams take longer over their channels than a
// connection of their own takes to open (its handshake and its login): then they go beside
// the ranges, else before them over the caller's link. Always, where no login was measured.
bool beside_pays(const Remote& remote, uint64_t bytes, size_t streams) {
    const transfer_detail::LinkCosts costs = transfer_detail::link_costs(remote);
    if (!costs.measured()) return true;
    return transfer_detail::finish_seconds(bytes, costs.channel_rate(true),
                                           transfer_detail::kConnectionRate, streams, 0,
                                           costs.channel_s) > costs.connect_s();
}

// Whether the host's channel listener pays for its one command before `bytes` go up in tar
// streams over the caller's link: new channels log in, and more than one stream would go
// (or would if they did not).
bool listener_pays(const Remote& remote, uint64_t bytes, const LinkPool* links) {
    const transfer_detail::LinkCosts costs = transfer_detail::link_costs(remote);
    const size_t most = static_cast<size_t>(
        std::clamp<uint64_t>(bytes / kBytesPerUploadStream, 1, kMaxUploadStreams));
    const size_t streams =
        links && !links->tuning()  // the fixed count
            ? most
            : transfer_detail::channels_worth(bytes, costs.channel_rate(true),
                                              transfer_detail::kConnectionRate, 0, most, 1);
    return costs.listener_pays(streams - 1);
}

// The tar streams of `streamed` (`bytes` in all), as many as pay over the caller's link: the
// host's channel listener is asked for first where it makes more of them pay.
std::vector<UploadStream> streams_for(Remote& remote, const std::vector<PlannedFile>& streamed,
                                      uint64_t bytes, Compression compression,
                                      const LinkPool* links) {
    size_t most = upload_streams_worth(remote, bytes, links);
    if (listener_pays(remote, bytes, links) && remote.listen_for_channels())
        most = upload_streams_worth(remote, bytes, links);
    return plan_upload_streams(streamed, compression, most);
}

// Sets `compress` on each file: a big one by its own samples, the small ones together.
void judge_compression(std::vector<PlannedFile>& files, Compression compression) {
    if (compression == Compression::none) return;
    std::vector<std::string> small;
    for (auto& file : files) {
        if (file.size >= kSampledSize)
            file.compress = worth_compressing(file.item.local_path, compression);
        else
            small.push_back(file.item.local_path);
    }
    const bool small_compress = small_files_compress(small, compression);
    if (!small_compress)
        spdlog::debug("the small files to upload do not compress; they go uncompressed");
    for (auto& file : files)
        if (file.size < kSampledSize) file.compress = small_compress;
}

}  // namespace

size_t upload_streams_worth(const Remote& remote, uint64_t bytes, const LinkPool* links) {
    const transfer_detail::LinkCosts costs = transfer_detail::link_costs(remote);
    if ((links && !links->tuning()) || !costs.measured()) return kMaxUploadStreams;
    // The first stream goes through the control shell (Session::exec_parallel).
    return transfer_detail::channels_worth(bytes, costs.channel_rate(true),
                                           transfer_detail::kConnectionRate, costs.channel_s,
                                           kMaxUploadStreams, 1);
}

std::vector<UploadStream> plan_upload_streams(const std::vector<PlannedFile>& files,
                                              Compression compression, size_t most_streams) {
    uint64_t total = 0, packed_bytes = 0;
    std::vector<size_t> packed, raw;  // indices into `files`
    for (size_t i = 0; i < files.size(); ++i) {
        total += files[i].size;
        const bool compress = files[i].compress && compression != Compression::none;
        (compress ? packed : raw).push_back(i);
        if (compress) packed_bytes += files[i].size;
    }
    const size_t n = static_cast<size_t>(
        std::clamp<uint64_t>(total / kBytesPerUploadStream, 1, std::max<size_t>(most_streams, 1)));
    size_t n_packed = packed.empty() ? 0 : n, n_raw = raw.empty() ? 0 : n;
    if (!packed.empty() && !raw.empty() && most_streams <= 1) {
        // One stream only (a second would not pay for its login): the kind with more bytes
        // sets its compression.
        const bool compress = 2 * packed_bytes >= total;
        std::vector<size_t>& kept = compress ? packed : raw;
        std::vector<size_t>& merged = compress ? raw : packed;
        kept.insert(kept.end(), merged.begin(), merged.end());
        merged.clear();
        n_packed = packed.empty() ? 0 : 1;
        n_raw = raw.empty() ? 0 : 1;
    } else if (!packed.empty() && !raw.empty()) {
        const double share =
            total ? static_cast<double>(packed_bytes) / static_cast<double>(total) : 0.5;
        n_packed =
            n < 2 ? 1 : std::clamp<size_t>(static_cast<size_t>(std::lround(share * n)), 1, n - 1);
        n_raw = n < 2 ? 1 : n - n_packed;
    }
    std::vector<UploadStream> streams;
    auto deal = [&](std::vector<size_t> kind, size_t count, Compression c) {
        count = std::min(count, kind.size());
        if (count == 0) return;
        std::vector<std::vector<size_t>> bins(count);
        std::vector<uint64_t> load(count, 0);
        std::stable_sort(kind.begin(), kind.end(),
                         [&](size_t a, size_t b) { return files[a].size > files[b].size; });
        for (size_t i : kind) {
            const size_t to =
                static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
            bins[to].push_back(i);
            load[to] += files[i].size;
        }
        for (auto& bin : bins) {
            std::sort(bin.begin(), bin.end());
            UploadStream stream{{}, c};
            for (size_t i : bin) stream.items.push_back(files[i].item);
            streams.push_back(std::move(stream));
        }
    };
    deal(packed, n_packed, compression);
    deal(raw, n_raw, Compression::none);
    if (streams.empty()) streams.push_back({{}, compression});
    return streams;
}

std::string describe(const SyncResult& r) {
    std::string text =
        std::to_string(r.moved.files) + " file(s), " + std::to_string(r.moved.bytes) + " bytes (" +
        std::to_string(r.unchanged) + " unchanged" +
        (r.skipped ? ", " + std::to_string(r.skipped) + " skipped" : std::string()) + ")";
    if (r.moved.bytes > 0 && r.seconds > 0) {
        text +=
            " in " + format_duration(r.seconds) + ", " +
            format_bytes(static_cast<uint64_t>(static_cast<double>(r.moved.bytes) / r.seconds)) +
            "/s";
    }
    return text;
}

namespace {

const char* compressor(Compression wanted) {
    return wanted == Compression::zstd ? "zstd" : "gzip";
}

}  // namespace

std::string transfer_detail::compressor_check(Compression wanted) {
    return shell_assignment("c", compressor(wanted)) +
           std::string(scripts::transfer_has_compressor);
}

Compression usable_compression(Remote& remote, Compression wanted) {
    if (wanted == Compression::none) return wanted;
    const char* program = compressor(wanted);
    const RemoteOutput out = remote.run(transfer_detail::compressor_check(wanted));
    if (out.out.find("yes") != std::string::npos) return wanted;
    spdlog::info(
        "{} has no {}; transfers go uncompressed (install {} there, or set "
        "compression: none to skip this check)",
        remote.name(), program, program);
    return Compression::none;
}

CompressionChoice checked_compression(std::function<Remote&()> remote, const std::string& wanted) {
    return CompressionCheck(std::move(remote), wanted).choice();
}

CompressionCheck::CompressionCheck(std::function<Remote&()> remote, const std::string& wanted)
    : state_(std::make_shared<State>(
          State{std::move(remote), parse_compression(wanted).value_or(Compression::none), {}})),
      choice_([state = state_] {
          if (!state->known) state->known = usable_compression(state->remote(), state->wanted);
          return *state->known;
      }) {}

bool CompressionCheck::send_ahead() {
    if (state_->known || state_->wanted == Compression::none) return false;
    state_->remote().run_ahead(transfer_detail::compressor_check(state_->wanted), {});
    return true;
}

SyncResult sync_up(Remote& remote, const std::map<std::string, std::vector<UploadItem>>& plan,
                   Compression compression) {
    return sync_up(remote, plan, [compression] { return compression; });
}

void sync_up_ahead(Remote& remote, const std::map<std::string, std::vector<UploadItem>>& plan,
                   LinkPool* links, bool guess) {
    for (const auto& [base, items] : plan) changed_for_upload_ahead(remote, base, items, guess);
    if (!links || is_near(remote)) return;
    for (const auto& [base, items] : plan)
        for (const auto& item : items)
            if (uses_links(remote, local_size(item.local_path), links)) {
                links->open_first();
                return;
            }
}

SyncResult sync_up(Remote& remote, const std::map<std::string, std::vector<UploadItem>>& plan,
                   const CompressionChoice& choose, LinkPool* links) {
    SyncResult result;
    std::map<std::string, std::vector<PlannedFile>> changed;
    uint64_t files = 0, bytes = 0;
    for (const auto& [base, items] : plan) {
        const auto send = changed_for_upload(remote, base, items);
        result.unchanged += items.size() - send.size();
        for (const auto& item : send) {
            changed[base].push_back({item, local_size(item.local_path), false});
            bytes += changed[base].back().size;
        }
        files += send.size();
    }
    if (auto summary = large_upload_summary(files, bytes, remote.name()))
        spdlog::info("{}", *summary);
    const auto start = Clock::now();
    TransferProgress progress("upload", files, bytes);
    // A big file to send over a far link: its side links connect while the compression and
    // the ranges' state are asked for (two round trips; a connection takes four or five).
    // Over a near link that saves nothing, and the handshakes take CPU from the start.
    bool ahead = false;
    for (const auto& [base, planned] : changed)
        for (const auto& file : planned) ahead = ahead || uses_links(remote, file.size, links);
    if (ahead && !is_near(remote)) links->open_ahead();
    const Compression compression = files > 0 ? choose() : Compression::none;
    for (auto& [base, planned] : changed) {
        judge_compression(planned, compression);
        // Big files that do not shrink go as ranges over the links (where they pay: a near
        // link takes a 50 MB file faster in a stream than through more connections and remote
        // commands); the rest in tar streams.
        std::vector<PlannedFile> streamed;
        std::vector<UploadItem> ranged;
        for (const auto& file : planned) {
            if (ranges_pay(remote, file.size, links) && !file.compress)
                ranged.push_back(file.item);
            else
                streamed.push_back(file);
        }
        transfer_detail::check_items(ranged);
        uint64_t streamed_bytes = 0;
        for (const auto& file : streamed) streamed_bytes += file.size;
        const std::vector<UploadStream> streams =
            streams_for(remote, streamed, streamed_bytes, compression, links);
        // Streams worth a connection of their own go beside the ranges (a few small files
        // take less after them than a connection takes to open).
        std::optional<StreamsBeside> beside;
        if (!ranged.empty() && streamed_bytes >= kBytesPerUploadStream && links &&
            links->limit() >= 1 &&
            (!links->tuning() || beside_pays(remote, streamed_bytes, streams.size())))
            beside.emplace(*links, base, streams, progress);
        RangeOptions options;
        options.links = beside ? beside->rest() : links;
        options.progress = &progress;
        const auto add = [&](const TransferStats& s) {
            result.moved.files += s.files;
            result.moved.bytes += s.bytes;
        };
        // The rest goes over the caller's link: over a far one before the ranges, with the
        // first one's preparing command sent along (one round trip for both).
        const bool streams_first = !beside && !streamed.empty() && !ranged.empty() &&
                                   remote.round_trip_s() >= kLongRoundTrip;
        if (streams_first) {
            const UploadItem& item = ranged.front();
            upload_ranges_ahead(remote, item.local_path, base + "/" + item.remote_path, options);
            add(upload_streams(remote, base, streams, &progress));
        }
        for (const auto& item : ranged) {
            upload_ranges(remote, item.local_path, base + "/" + item.remote_path, options);
            add({1, local_size(item.local_path)});
        }
        if ((streamed.empty() && !ranged.empty()) || streams_first) continue;
        TransferStats s;
        if (!beside || !beside->done(s)) s = upload_streams(remote, base, streams, &progress);
        add(s);
    }
    progress.dismiss();
    result.seconds = seconds_since(start);
    return result;
}

SyncResult sync_down(Remote& remote, const std::string& remote_base, const std::string& local_base,
                     Compression compression) {
    return sync_down(remote, remote_base, local_base, [compression] { return compression; }, {});
}

}  // namespace mlt
