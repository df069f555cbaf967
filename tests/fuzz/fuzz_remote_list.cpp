// libFuzzer target: remote listings (find -print0 output, and the clock record plus
// "<r|u> <size> <mtime> <ctime> <inode> <path>" records) as list_remote_files,
// list_remote_file_info and stat_remote_files parse them.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fake_remote.h"
#include "mlt/transfer/transfer.h"
#include "mlt/util/error.h"
#include "mlt/util/remote_name.h"

namespace {

void require(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "remote listing: %s\n", what);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view output(reinterpret_cast<const char*>(data), size);
    mlt_fuzz::FakeRemote remote(output);

    try {
        const std::vector<std::string> names = mlt::list_remote_files(remote, "work");
        require(std::is_sorted(names.begin(), names.end()), "names not sorted");
        for (const auto& n : names)
            require(mlt::remote_name_problem(n).empty(), "a name passed the gate");
    } catch (const mlt::Error&) {
        // A name the gate refuses, or too many records: tampering, the documented refusal.
    }

    for (int call = 0; call < 2; ++call) {
        try {
            int64_t clock_ns = 0;
            const std::vector<mlt::RemoteFileInfo> infos =
                call == 0 ? mlt::list_remote_file_info(remote, "work", &clock_ns)
                          : mlt::stat_remote_files(remote, "work", {"a", "b/c"}, &clock_ns);
            require(std::is_sorted(infos.begin(), infos.end(),
                                   [](const auto& a, const auto& b) { return a.path < b.path; }),
                    "infos not sorted");
            for (const auto& i : infos)
                require(mlt::remote_name_problem(i.path).empty(), "a name passed the gate");
        } catch (const mlt::Error&) {
            // "gave unexpected output", or tampering: the documented refusals.
        }
    }
    return 0;
}
