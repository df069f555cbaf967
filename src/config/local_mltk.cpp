// The local MLTK's version: remembered from a spec load, else asked of python3 once.
#include "mlt/config/local_mltk.h"

#include <stdio.h>

#include <map>
#include <mutex>

namespace mlt {

namespace {

// The interpreter of the probe: SpecOptions' default, looked up in PATH as run_child does.
constexpr char kProbePython[] = "python3";

std::mutex& mutex() {
    static std::mutex m;
    return m;
}

// By interpreter: the version a spec load found ("" none).
std::map<std::string, std::string>& remembered() {
    static std::map<std::string, std::string> versions;
    return versions;
}

// The probe's answer, once it ran.
std::optional<std::string>& probed() {
    static std::optional<std::string> version;
    return version;
}

std::string trimmed_version(std::string out) {
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return is_mltk_version(out) ? out : std::string();
}

// The version python3 reports, "" when there is none (or python3 does not answer within 10 s).
std::string probe_local_mltk_version() {
    FILE* p =
        ::popen("timeout 10 python3 -c 'import mltk; print(mltk.__version__)' 2>/dev/null", "r");
    if (!p) return {};
    std::string out;
    char buf[128];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    if (::pclose(p) != 0) return {};
    return trimmed_version(out);
}

}  // namespace

bool is_mltk_version(const std::string& text) {
    return !text.empty() && text.find_first_not_of(
                                "0123456789.abcdefghijklmnopqrstuvwxyz"
                                "ABCDEFGHIJKLMNOPQRSTUVWXYZ+-_") == std::string::npos;
}

void remember_local_mltk_version(const std::string& python,
                                 const std::optional<std::string>& version) {
    std::lock_guard<std::mutex> lock(mutex());
    remembered()[python] = version ? trimmed_version(*version) : std::string();
}

std::string local_mltk_version() {
    std::lock_guard<std::mutex> lock(mutex());
    const auto it = remembered().find(kProbePython);
    if (it != remembered().end()) return it->second;
    if (!probed()) probed() = probe_local_mltk_version();
    return *probed();
}

}  // namespace mlt
