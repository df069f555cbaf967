#pragma once
// Helpers for the transfer tests: temporary directories, small file utilities, a Remote
// that serves canned (possibly hostile) tar streams, and a hand-written ustar builder so
// the tests can build archives that no well-behaved tar would produce.

#include <fcntl.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "mlt/ssh/remote.h"

namespace mlt::test {

// Replaces spdlog's default logger while alive, keeping what is logged.
class CapturedLog {
  public:
    CapturedLog()
        : previous_(spdlog::default_logger()),
          sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)) {
        spdlog::set_default_logger(std::make_shared<spdlog::logger>("captured", sink_));
    }
    ~CapturedLog() { spdlog::set_default_logger(previous_); }
    std::string text() const { return text_.str(); }

  private:
    std::ostringstream text_;
    std::shared_ptr<spdlog::logger> previous_;
    std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it.
class TempDir {
  public:
    TempDir() {
        const char* tmp = std::getenv("TMPDIR");
        std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/mlt-transfer-XXXXXX";
        std::vector<char> buf(templ.begin(), templ.end());
        buf.push_back('\0');
        if (!::mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
        path_ = buf.data();
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::string& path() const { return path_; }
    std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

  private:
    std::string path_;
};

// Sets an environment variable for the lifetime of the object.
class ScopedEnv {
  public:
    ScopedEnv(const char* name, const std::string& value) : name_(name) {
        if (const char* old = std::getenv(name)) {
            old_ = old;
            had_ = true;
        }
        ::setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (had_)
            ::setenv(name_, old_.c_str(), 1);
        else
            ::unsetenv(name_);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

  private:
    const char* name_;
    std::string old_;
    bool had_ = false;
};

// Writes `content` to `path`, creating parent directories.
inline void write_file(const std::string& path, const std::string& content) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) throw std::runtime_error("cannot write " + path);
}

// The whole content of `path`; throws when it cannot be read.
inline std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Names of the files in `dir` (not recursive) that look like download part files.
inline std::vector<std::string> part_files(const std::string& dir) {
    std::vector<std::string> found;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
        if (e.path().filename().string().find(".mlt-part-") != std::string::npos ||
            e.path().filename().string().find(".mlt-resume") != std::string::npos ||
            e.path().filename().string().find(".mlt-ranges") != std::string::npos)
            found.push_back(e.path().string());
    return found;
}

// A Remote whose stream() ignores stdin and serves fixed stdout/stderr/exit status.
class CannedRemote : public Remote {
  public:
    CannedRemote(std::string out, int exit_status = 0, std::string err = {})
        : out_(std::move(out)), err_(std::move(err)), exit_status_(exit_status) {}
    const std::string& name() const override { return name_; }
    RemoteOutput run(const std::string& command, std::string_view) override {
        commands.push_back(command);
        return {exit_status_, out_, err_};
    }
    int stream(const std::string& command, const InputSource& input, const OutputSink& on_stdout,
               const OutputSink& on_stderr) override {
        commands.push_back(command);
        std::vector<char> buf(64 * 1024);
        if (input)
            while (input(buf.data(), buf.size()) > 0) {
            }
        for (size_t off = 0; off < out_.size(); off += kChunk) {
            std::string_view piece = std::string_view(out_).substr(off, kChunk);
            delivered += piece.size();
            if (on_stdout) on_stdout(piece);
        }
        if (on_stderr && !err_.empty()) on_stderr(err_);
        return exit_status_;
    }

    static constexpr size_t kChunk = 64 * 1024;
    std::vector<std::string> commands;
    size_t delivered = 0;  // stdout bytes handed to the sink so far

  private:
    std::string name_ = "canned";
    std::string out_;
    std::string err_;
    int exit_status_;
};

// Builds a ustar archive entry by entry (names up to 100 bytes).
class TarBuilder {
  public:
    // Adds an entry; `type` is the ustar typeflag ('0' file, '1' hard link, '2' symlink,
    // '3' char device, '5' directory, '6' fifo). `declared_size` < 0 means content.size().
    TarBuilder& add(const std::string& name, char type, const std::string& content = {},
                    const std::string& link = {}, unsigned mode = 0644, long mtime = 1500000000,
                    long declared_size = -1) {
        char h[512] = {};
        std::memcpy(h, name.data(), std::min<size_t>(name.size(), 100));
        octal(h + 100, 8, mode);
        octal(h + 108, 8, 0);
        octal(h + 116, 8, 0);
        octal(h + 124, 12, declared_size < 0 ? content.size() : static_cast<size_t>(declared_size));
        octal(h + 136, 12, static_cast<unsigned long>(mtime));
        h[156] = type;
        std::memcpy(h + 157, link.data(), std::min<size_t>(link.size(), 100));
        std::memcpy(h + 257, "ustar", 6);
        std::memcpy(h + 263, "00", 2);
        std::memset(h + 148, ' ', 8);
        unsigned long sum = 0;
        for (unsigned char c : h) sum += c;
        octal(h + 148, 7, sum);  // six digits, NUL, and the space already there

        data_.append(h, sizeof h);
        data_ += content;
        data_.append((512 - content.size() % 512) % 512, '\0');
        return *this;
    }
    // The archive with its end marker.
    std::string finish() const { return data_ + std::string(1024, '\0'); }
    // The archive so far, without an end marker (a cut-off stream).
    const std::string& partial() const { return data_; }

  private:
    // `width - 1` octal digits, zero-padded, then NUL.
    static void octal(char* field, size_t width, unsigned long value) {
        for (size_t i = width - 1; i-- > 0; value >>= 3)
            field[i] = static_cast<char>('0' + (value & 7));
        field[width - 1] = '\0';
    }
    std::string data_;
};

}  // namespace mlt::test
