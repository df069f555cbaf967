// checkpoints on this machine: which files a pull leaves on the host, and which local copies
// go after it (include/mlt/train/run/checkpoints.h).
#include "mlt/train/run/checkpoints.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <sstream>

#include "mlt/transfer/transfer.h"
#include "mlt/util/fd.h"
#include "mlt/util/paths.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

// Deletes `name` (a safe relative path: the ledger's parser checked it) under `base_fd` when
// it is a regular file of `size` bytes and mtime `mtime_s`, opening each dir on the way with
// O_NOFOLLOW; returns whether it did.
bool delete_if_same(int base_fd, const std::string& name, uint64_t size, int64_t mtime_s) {
    UniqueFd dir(::fcntl(base_fd, F_DUPFD_CLOEXEC, 0));
    size_t at = 0;
    for (size_t slash; dir && (slash = name.find('/', at)) != std::string::npos; at = slash + 1)
        dir = UniqueFd(::openat(dir.get(), name.substr(at, slash - at).c_str(),
                                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir) return false;
    const std::string leaf = name.substr(at);
    struct stat st;
    if (::fstatat(dir.get(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        static_cast<uint64_t>(st.st_size) != size || st.st_mtim.tv_sec != mtime_s)
        return false;
    return ::unlinkat(dir.get(), leaf.c_str(), 0) == 0;
}

// The checkpoints that earlier pulls deleted here, as "NAME<TAB>SIZE<TAB>MTIME": the lines of
// the local ledger marked `here`.
std::string version_key(const std::string& name, uint64_t size, int64_t mtime_s) {
    return name + "\t" + std::to_string(size) + "\t" + std::to_string(mtime_s);
}

// The local ledger's text (the first 8 MiB; never through a symlink); empty when there is none.
std::string read_local_ledger(const std::string& path) {
    std::string text;
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return text;
    char buf[65536];
    for (ssize_t n; (n = ::read(fd.get(), buf, sizeof buf)) > 0 && text.size() < (8u << 20);)
        text.append(buf, static_cast<size_t>(n));
    return text;
}

std::set<std::string> deleted_here(const std::string& path) {
    std::set<std::string> names;
    std::istringstream in(read_local_ledger(path));
    for (std::string line; std::getline(in, line);) {
        const size_t tab = line.find('\t');
        const size_t third = tab == std::string::npos ? tab : line.find('\t', tab + 1);
        const size_t end = third == std::string::npos ? third : line.find('\t', third + 1);
        if (end != std::string::npos && line.size() > 5 &&
            line.compare(line.size() - 5, 5, "\there") == 0)
            names.insert(line.substr(0, end));
    }
    return names;
}

}  // namespace

bool is_checkpoint(const CheckpointSettings& c, const std::string& path) {
    return c.on() && ::fnmatch(c.pattern.c_str(), path.c_str(), 0) == 0;
}

bool pull_leaves_out(const CheckpointSettings& c, const CheckpointLedger& ledger,
                     const RemoteFileInfo& info) {
    if (!is_checkpoint(c, info.path)) return false;
    const CheckpointEntry* e = ledger.find(info.path);
    return !e || !e->whole || !e->kept || e->size != info.size ||
           e->mtime_s != floor_seconds(info.mtime_ns);
}

void prune_local_checkpoints(const std::string& local_logs, const CheckpointSettings& c,
                             const CheckpointLedger& ledger, const std::set<std::string>& own_names,
                             CheckpointTally& tally) {
    tally = CheckpointTally{};
    tally.known = true;
    const std::string kept_ledger = local_logs + "/" + kLocalLedger;
    UniqueFd base(::open(local_logs.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!base) return;
    const std::set<std::string> before = deleted_here(kept_ledger);
    std::string text;
    for (const CheckpointEntry& e : ledger.entries) {
        text += e.line;
        if (e.kept) {
            ++tally.host_kept;
        } else {
            ++tally.host_deleted;
            tally.host_freed += e.size;
            const bool own = own_names.count(e.name.substr(0, e.name.find('/'))) > 0;
            if (before.count(version_key(e.name, e.size, e.mtime_s)) ||
                (!own && is_checkpoint(c, e.name) &&
                 delete_if_same(base.get(), e.name, e.size, e.mtime_s))) {
                ++tally.local_deleted;
                tally.local_freed += e.size;
                text += "\there";
            }
        }
        text += "\n";
    }
    write_file_atomic(kept_ledger, text, 0644);
}

std::string checkpoint_seed(const std::string& local_logs, const CheckpointSettings& c,
                            const std::vector<UploadItem>& pushed) {
    if (!c.on()) return {};
    // The local ledger as the host wrote it: each line less this machine's `here` mark.
    std::string text = read_local_ledger(local_logs + "/" + kLocalLedger);
    for (size_t at = 0; (at = text.find("\there\n", at)) != std::string::npos;) text.erase(at, 5);
    const CheckpointLedger ledger = parse_checkpoint_ledger(text);
    std::string seed;
    for (const UploadItem& item : pushed) {
        struct stat st;
        if (!is_checkpoint(c, item.remote_path) ||
            item.remote_path.find_first_of("\t\n") != std::string::npos ||
            ::stat(item.local_path.c_str(), &st) != 0)
            continue;
        const auto size = static_cast<uint64_t>(st.st_size);
        const int64_t mtime = st.st_mtim.tv_sec;
        const CheckpointEntry* e = ledger.find(item.remote_path);
        const bool listed = e && e->size == size && e->mtime_s == mtime;
        seed += item.remote_path + "\t" + std::to_string(size) + "\t" + std::to_string(mtime) +
                "\t" + std::to_string(mtime) + "\t" + (listed && !e->whole ? "2" : "1") + "\t" +
                (listed ? e->metric : std::string()) + "\tkept\n";
    }
    size_t deleted = 0;
    for (const CheckpointEntry& e : ledger.entries)
        if (!e.kept && ++deleted <= 2000) seed += e.line + "\n";
    return seed;
}

std::string checkpoints_summary(const CheckpointTally& t) {
    if (!t.known) return {};
    std::string s = "checkpoints: " + std::to_string(t.host_kept) + " kept on the host";
    if (t.host_deleted > 0)
        s += " (" + std::to_string(t.host_deleted) + " deleted there, " +
             format_bytes(t.host_freed) + " freed)";
    if (t.local_deleted > 0)
        s += "; " + std::to_string(t.local_deleted) + " local cop" +
             (t.local_deleted == 1 ? "y" : "ies") + " deleted (" + format_bytes(t.local_freed) +
             " freed)";
    if (t.held_back > 0)
        s += "; " + std::to_string(t.held_back) + " not brought home (not whole, or deleted)";
    return s;
}

}  // namespace mlt
