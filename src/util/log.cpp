// Logging setup: the terminal's level, the debug log file (rotated), the one-line cut.
#include "mlt/util/log.h"

#include <fcntl.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "mlt/util/fd.h"
#include "mlt/util/reporter.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

// `%*`: nothing for info, "warning: " etc. for the other levels, so ordinary progress
// lines read as plain sentences.
class LevelPrefix : public spdlog::custom_flag_formatter {
  public:
    void format(const spdlog::details::log_msg& msg, const std::tm&,
                spdlog::memory_buf_t& dest) override {
        const char* text = "";
        // clang-format off
        switch (msg.level) {
            case spdlog::level::trace: text = "trace: "; break;
            case spdlog::level::debug: text = "debug: "; break;
            case spdlog::level::warn: text = "warning: "; break;
            case spdlog::level::err: text = "error: "; break;
            case spdlog::level::critical: text = "error: "; break;
            default: break;
        }
        // clang-format on
        dest.append(text, text + std::char_traits<char>::length(text));
    }
    std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<LevelPrefix>();
    }
};

// `%V`: the message, each of its lines escaped (printable_lines): debug lines quote remote
// stderr and names, which must not reach a terminal (or a `tail` of the log file) raw.
class EscapedPayload : public spdlog::custom_flag_formatter {
  public:
    void format(const spdlog::details::log_msg& msg, const std::tm&,
                spdlog::memory_buf_t& dest) override {
        const std::string text =
            printable_lines(std::string_view(msg.payload.data(), msg.payload.size()), 8192);
        dest.append(text.data(), text.data() + text.size());
    }
    std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<EscapedPayload>();
    }
};

// A formatted message cut to kMaxLogMessage bytes, with what was left out said: a message
// may quote a remote's words, and no remote decides how much lands in the log.
std::string_view bounded(std::string_view line, std::string& storage) {
    if (line.size() <= kMaxLogMessage) return line;
    const bool newline = line.back() == '\n';
    storage.assign(line.substr(0, kMaxLogMessage));
    storage += " ... (" + std::to_string(line.size() - kMaxLogMessage) + " more bytes)";
    if (newline) storage += '\n';
    return storage;
}

// The debug log file, rotated as logrotate does: once a message would take the file past
// `max_bytes`, FILE.1 becomes FILE.2 (the oldest goes), FILE becomes FILE.1 and a new FILE
// starts. Several mlt processes may share it: each write looks at the file's real size,
// and a process whose file another one rotated away reopens FILE instead of rotating again.
class RotatingFileSink : public spdlog::sinks::base_sink<std::mutex> {
  public:
    RotatingFileSink(std::string path, uint64_t max_bytes, int kept)
        : path_(std::move(path)), max_bytes_(max_bytes), kept_(kept) {
        if (!open()) throw std::runtime_error("cannot open " + path_);
    }

  protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
        spdlog::memory_buf_t formatted;
        formatter_->format(msg, formatted);
        std::string storage;
        const std::string_view line =
            bounded(std::string_view(formatted.data(), formatted.size()), storage);
        struct stat now {};
        struct stat named {};
        const bool same = fd_ && ::fstat(fd_.get(), &now) == 0 &&
                          ::stat(path_.c_str(), &named) == 0 && now.st_ino == named.st_ino &&
                          now.st_dev == named.st_dev;
        // Rotated (or removed) by another process: its new file. A file that cannot be
        // opened any more is skipped: the log is a convenience, the run goes on.
        if (!same && !open()) return;
        if (same && now.st_size > 0 &&
            static_cast<uint64_t>(now.st_size) + line.size() > max_bytes_ && !rotate())
            return;
        write_all(line);
    }
    void flush_() override {}  // every write goes straight to the file

  private:
    bool open() {
        fd_ = UniqueFd(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
        return static_cast<bool>(fd_);
    }

    bool rotate() {
        for (int i = kept_; i >= 1; --i) {
            const std::string from = i == 1 ? path_ : path_ + "." + std::to_string(i - 1);
            ::rename(from.c_str(), (path_ + "." + std::to_string(i)).c_str());
        }
        if (kept_ == 0) ::unlink(path_.c_str());
        return open();
    }

    void write_all(std::string_view data) {
        while (!data.empty()) {
            const ssize_t n = ::write(fd_.get(), data.data(), data.size());
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return;  // a full disk: the log is a convenience, the run goes on
            data.remove_prefix(static_cast<size_t>(n));
        }
    }

    std::string path_;
    uint64_t max_bytes_;
    int kept_;
    UniqueFd fd_;
};

// The console side of the log: each formatted line becomes an Event::log of the process's
// reporter, so that a warning never lands in the middle of a progress or console line.
class ReporterSink : public spdlog::sinks::base_sink<std::mutex> {
  protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
        spdlog::memory_buf_t formatted;
        formatter_->format(msg, formatted);
        std::string storage;
        std::string_view line =
            bounded(std::string_view(formatted.data(), formatted.size()), storage);
        // The pattern formatter ends the line; the reporter decides how lines end.
        while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
        // Warnings and errors quote outside text (settings keys, remote names): one line,
        // escaped and bounded. Debug output keeps its lines (each escaped by `%V`).
        std::string shown;
        if (msg.level >= spdlog::level::warn) {
            shown = printable(line, kMaxWarningLine);
            line = shown;
        }
        // Looked up per message, not kept: set_reporter() after setup_logging() counts.
        reporter().emit(Event::log, line);
    }
    void flush_() override {}  // the reporter flushes after each event
};

}  // namespace

namespace {
std::shared_ptr<spdlog::sinks::sink> g_file_sink;  // setup_logging()'s, when there is one
}  // namespace

void log_to_file(std::string_view line) {
    const auto sink = g_file_sink;
    if (!sink) return;
    // The reporter's text begins with "warning: "; the file's pattern names the level.
    constexpr std::string_view kWarning = "warning: ";
    if (line.substr(0, kWarning.size()) == kWarning) line.remove_prefix(kWarning.size());
    sink->log(spdlog::details::log_msg("mlt", spdlog::level::warn,
                                       spdlog::string_view_t(line.data(), line.size())));
}

void setup_logging(int verbosity, const std::string& file_path) {
    g_file_sink.reset();
    auto console = std::make_shared<ReporterSink>();
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<LevelPrefix>('*').add_flag<EscapedPayload>('V').set_pattern("mlt: %*%V");
    console->set_formatter(std::move(formatter));
    const auto console_level = verbosity >= 2   ? spdlog::level::trace
                               : verbosity == 1 ? spdlog::level::debug
                                                : spdlog::level::info;
    console->set_level(console_level);
    std::vector<spdlog::sink_ptr> sinks{console};
    if (!file_path.empty()) {
        try {
            std::filesystem::create_directories(std::filesystem::path(file_path).parent_path());
            auto file = std::make_shared<RotatingFileSink>(file_path, kLogFileBytes, kLogFilesKept);
            auto file_format = std::make_unique<spdlog::pattern_formatter>();
            file_format->add_flag<EscapedPayload>('V').set_pattern(
                "%Y-%m-%d %H:%M:%S.%e [%P] %l: %V");
            file->set_formatter(std::move(file_format));
            file->set_level(std::min(console_level, spdlog::level::debug));
            sinks.push_back(file);
            g_file_sink = file;
        } catch (const std::exception&) {
            // The verbose file log is a convenience: a read-only home must not stop a run.
        }
    }
    auto logger = std::make_shared<spdlog::logger>("mlt", sinks.begin(), sinks.end());
    logger->set_level(std::min(console_level, spdlog::level::debug));
    logger->flush_on(spdlog::level::trace);
    spdlog::set_default_logger(std::move(logger));
}

}  // namespace mlt
