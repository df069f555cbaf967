// libFuzzer target: a downloaded tar stream (plain, gzip or zstd), extracted by download()
// into a scratch directory. Besides not crashing, nothing may appear outside the base
// directory: the base holds symlinks to a sibling directory, which must stay empty.

#include <dirent.h>
#include <ftw.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fake_remote.h"
#include "mlt/transfer/transfer.h"
#include "mlt/util/error.h"

namespace {

std::string g_root;  // <tmp>/mlt-fuzz-tar-XXXXXX: holds base/ and outside/

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "tar extract: %s\n", what.c_str());
    std::abort();
}

std::vector<std::string> entries_of(const std::string& dir) {
    std::vector<std::string> names;
    DIR* d = ::opendir(dir.c_str());
    if (!d) die("cannot list " + dir);
    while (dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(d);
    return names;
}

int remove_one(const char* path, const struct stat*, int, FTW*) {
    return ::remove(path);
}

void remove_tree(const std::string& path) {
    // FTW_PHYS: links are removed, never followed.
    if (::nftw(path.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
        die("cannot clean " + path);
}

void make_base(const std::string& base) {
    // Traps: names an archive may use to reach outside/ through a link already on disk.
    if (::mkdir(base.c_str(), 0755) != 0 || ::mkdir((base + "/dir").c_str(), 0755) != 0 ||
        ::symlink("../outside", (base + "/link").c_str()) != 0 ||
        ::symlink("../../outside", (base + "/dir/link").c_str()) != 0 ||
        ::symlink("../outside/file", (base + "/file").c_str()) != 0)
        die("cannot create " + base);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    spdlog::set_level(spdlog::level::off);
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/mlt-fuzz-tar-XXXXXX";
    if (!::mkdtemp(tmpl.data())) die("cannot create a scratch directory");
    g_root = tmpl;
    if (::mkdir((g_root + "/outside").c_str(), 0755) != 0) die("cannot create outside/");
    std::atexit([] { remove_tree(g_root); });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string base = g_root + "/base";
    make_base(base);
    mlt_fuzz::FakeRemote remote(std::string_view(reinterpret_cast<const char*>(data), size));
    try {
        (void)mlt::download(remote, "work", {"."}, base);
    } catch (const mlt::Error&) {
        // A damaged stream or a refused entry: the documented refusal.
    }
    if (!entries_of(g_root + "/outside").empty()) die("an entry was written through a symlink");
    if (entries_of(g_root).size() != 2) die("an entry was written next to the base directory");
    remove_tree(base);
    return 0;
}
