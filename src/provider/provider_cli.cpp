// CliProvider: a marketplace's CLI run once per call (provider_cli.h), and make_provider.
#include "provider_cli.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "mlt/util/process.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

constexpr size_t kMaxOutput = 8u << 20;  // a marketplace's listing is some 100 KB
constexpr size_t kMaxErrLines = 200;

// A file holding `text` for the child's stdin, removed as it goes out of scope.
class InputFile {
  public:
    explicit InputFile(const std::string& text) {
        if (text.empty()) return;
        const char* tmp = ::getenv("TMPDIR");
        path_ = std::string(tmp && *tmp ? tmp : "/tmp") + "/mlt-input-XXXXXX";
        const int fd = ::mkstemp(path_.data());
        if (fd < 0) throw io_error("cannot create " + path_ + ": " + std::strerror(errno));
        const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
        ::close(fd);
        if (!ok) throw io_error("cannot write " + path_);
    }
    ~InputFile() {
        if (!path_.empty()) ::unlink(path_.c_str());
    }
    std::string path() const { return path_.empty() ? "/dev/null" : path_; }

  private:
    std::string path_;
};

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    size_t at = 0;
    for (size_t nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1)
        lines.push_back(text.substr(at, nl - at));
    if (at < text.size()) lines.push_back(text.substr(at));
    return lines;
}

std::string command_text(const std::string& program, const std::vector<std::string>& args) {
    std::string s = program;
    for (const auto& a : args) s += " " + a;
    return s;
}

// The message of vast-cli's error under --raw: {"error": true, "status_code": N, "msg": M}
// on stderr; empty when `line` is none.
std::string raw_error(const std::string& line) {
    if (line.empty() || line[0] != '{') return {};
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("error") || !j["error"].is_boolean() || j["error"] != true)
        return {};
    const auto msg = j.find("msg");
    const auto code = j.find("status_code");
    return "Failed with error " +
           (code != j.end() && code->is_number_integer() ? std::to_string(code->get<int>())
                                                         : std::string("?")) +
           ": " + (msg != j.end() && msg->is_string() ? msg->get<std::string>() : line);
}

// The CLI's own error line: vast's "Failed with error 401: ..." (or its JSON form under
// --raw), runpodctl's "Error: ...".
bool is_error_line(const std::string& line) {
    return line.rfind("Failed with error", 0) == 0 || line.rfind("Error:", 0) == 0 ||
           line.rfind("error:", 0) == 0 || !raw_error(line).empty();
}

std::string error_words(const std::string& line) {
    const std::string raw = raw_error(line);
    return raw.empty() ? line : raw;
}

}  // namespace

CliProvider::Output CliProvider::run(const std::vector<std::string>& args,
                                     const std::string& input) const {
    std::vector<std::string> argv{program_};
    argv.insert(argv.end(), args.begin(), args.end());
    InputFile in(input);
    Output o;
    const ChildResult r = run_child_split(
        in.path(), argv, timeout_,
        [&](const std::string& line) {
            if (o.out.size() < kMaxOutput) o.out += line + "\n";
        },
        [&](const std::string& line) {
            if (o.err.size() < kMaxErrLines) o.err.push_back(line);
        });
    if (!r.started)
        throw config_error(program_ + " cannot be run: " + std::strerror(r.start_errno),
                           "install the marketplace's CLI and log in to it (docs/providers.md), "
                           "or leave `provider` out");
    if (r.timed_out)
        throw config_error("'" + command_text(program_, args) + "' did not end within " +
                               std::to_string(timeout_.count() / 1000) + " s",
                           "is the marketplace reachable? try the command yourself");
    o.exit_code = r.exit_code;
    return o;
}

Error CliProvider::failed(const std::string& what, const Output& o) const {
    std::string said;
    for (const auto& l : o.err)
        if (said.empty() && is_error_line(l)) said = error_words(l);
    if (said.empty())
        for (const auto& l : lines_of(o.out))
            if (said.empty() && is_error_line(l)) said = l;
    // Else what it printed: stdout's last line (runpodctl's "stop failed; status is ...")
    // before stderr's (a deprecation warning).
    const auto out_lines = lines_of(o.out);
    if (said.empty() && !out_lines.empty()) said = out_lines.back();
    if (said.empty() && !o.err.empty()) said = o.err.back();
    if (said.empty()) said = "exit status " + std::to_string(o.exit_code);
    return config_error(program_ + " " + what + " failed: " + said,
                        "is " + program_ + " logged in? try '" + program_ + " " + what +
                            "' yourself (docs/providers.md)");
}

Error CliProvider::odd_output(const std::string& what, const std::string& detail) const {
    return config_error(
        program_ + " " + what + " printed what mlt cannot read: " + detail,
        "is this a version of " + program_ + " that mlt knows? (docs/providers.md)");
}

nlohmann::json CliProvider::read_json(const std::vector<std::string>& args,
                                      const std::string& what) const {
    const Output o = run(args);
    const bool error = std::any_of(o.err.begin(), o.err.end(), is_error_line) ||
                       is_error_line(o.out.substr(0, o.out.find('\n')));
    if (o.exit_code != 0 || error || o.out.find_first_not_of(" \n") == std::string::npos)
        throw failed(what, o);
    try {
        return nlohmann::json::parse(o.out);
    } catch (const nlohmann::json::exception&) {
        throw odd_output(what, "no JSON");
    }
}

void CliProvider::expect_line(const std::vector<std::string>& args, const std::string& input,
                              const std::string& line, const std::string& what) const {
    const Output o = run(args, input);
    const auto lines = lines_of(o.out);
    // The question destroy asks comes before the answer, on the same line.
    const bool said = std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
        return l == line || (l.size() > line.size() &&
                             l.compare(l.size() - line.size(), line.size(), line) == 0);
    });
    if (o.exit_code != 0 || !said) throw failed(what, o);
}

int CliProvider::parse_port(const nlohmann::json& v) {
    long long p = 0;
    if (v.is_number_integer())
        p = v.get<long long>();
    else if (v.is_string())
        p = parse_decimal(v.get<std::string>(), 1, 65535).value_or(0);
    return p >= 1 && p <= 65535 ? static_cast<int>(p) : 0;
}

void CliProvider::sort_by_price(std::vector<Offer>& offers) {
    std::stable_sort(offers.begin(), offers.end(), [](const Offer& a, const Offer& b) {
        return a.price_per_hour < b.price_per_hour;
    });
}

std::unique_ptr<Provider> make_provider(const ProviderSettings& settings,
                                        std::chrono::milliseconds timeout) {
    if (settings.name == "vast") return make_vast_cli(timeout);
    if (settings.name == "runpod") return make_runpod_cli(timeout);
    throw usage_error("provider '" + settings.name + "' is not one mlt knows",
                      "write provider: {name: vast, ...} or {name: runpod, ...}");
}

}  // namespace mlt
