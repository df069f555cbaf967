// libFuzzer target: `-h` host specs (parse_host_spec, to_string, host_name_problem).
// Besides not crashing, a spec that parses must come back unchanged from its canonical text.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "mlt/config/host_spec.h"
#include "mlt/util/error.h"

namespace {

bool same(const mlt::HostSpec& a, const mlt::HostSpec& b) {
    return a.user == b.user && a.host == b.host && a.port == b.port && a.remote_dir == b.remote_dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    (void)mlt::host_name_problem(text);
    mlt::HostSpec spec;
    try {
        spec = mlt::parse_host_spec(text);
    } catch (const mlt::Error&) {
        return 0;  // refused with the documented error: fine
    }
    if (spec.host.empty() || spec.port < 0 || spec.port > 65535) {
        std::fprintf(stderr, "parse_host_spec accepted a spec without host or port range\n");
        std::abort();
    }
    (void)mlt::host_name_problem(spec.host);
    const std::string canonical = mlt::to_string(spec);
    try {
        if (!same(mlt::parse_host_spec(canonical), spec)) {
            std::fprintf(stderr, "to_string gave '%s', which parses to another spec\n",
                         canonical.c_str());
            std::abort();
        }
    } catch (const mlt::Error& e) {
        std::fprintf(stderr, "to_string gave '%s', which does not parse: %s\n", canonical.c_str(),
                     e.what());
        std::abort();
    }
    return 0;
}
