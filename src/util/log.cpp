#include "mlt/util/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <string_view>
#include <vector>

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

// The console side of the log: each formatted line becomes an Event::log of the process's
// reporter, so that a warning never lands in the middle of a progress or console line.
class ReporterSink : public spdlog::sinks::base_sink<std::mutex> {
  protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
        spdlog::memory_buf_t formatted;
        formatter_->format(msg, formatted);
        std::string_view line(formatted.data(), formatted.size());
        // The pattern formatter ends the line; the reporter decides how lines end.
        while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
        // Warnings and errors quote outside text (settings keys, remote names): one line,
        // escaped and bounded. Debug output keeps its lines (each escaped by `%V`).
        std::string shown;
        if (msg.level >= spdlog::level::warn) {
            shown = printable(line, 2000);
            line = shown;
        }
        // Looked up per message, not kept: set_reporter() after setup_logging() counts.
        reporter().emit(Event::log, line);
    }
    void flush_() override {}  // the reporter flushes after each event
};

}  // namespace

void setup_logging(int verbosity, const std::string& file_path) {
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
            auto file =
                std::make_shared<spdlog::sinks::rotating_file_sink_mt>(file_path, 1 << 20, 3);
            auto file_format = std::make_unique<spdlog::pattern_formatter>();
            file_format->add_flag<EscapedPayload>('V').set_pattern(
                "%Y-%m-%d %H:%M:%S.%e [%P] %l: %V");
            file->set_formatter(std::move(file_format));
            file->set_level(std::min(console_level, spdlog::level::debug));
            sinks.push_back(file);
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
