#include "mlt/util/log.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace mlt {

namespace {

// `%*`: nothing for info, "warning: " etc. for the other levels, so ordinary progress
// lines read as plain sentences.
class LevelPrefix : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm&,
                spdlog::memory_buf_t& dest) override {
        const char* text = "";
        switch (msg.level) {
            case spdlog::level::trace: text = "trace: "; break;
            case spdlog::level::debug: text = "debug: "; break;
            case spdlog::level::warn: text = "warning: "; break;
            case spdlog::level::err: text = "error: "; break;
            case spdlog::level::critical: text = "error: "; break;
            default: break;
        }
        dest.append(text, text + std::char_traits<char>::length(text));
    }
    std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<LevelPrefix>();
    }
};

}  // namespace

void setup_logging(int verbosity, const std::string& file_path) {
    auto console = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<LevelPrefix>('*').set_pattern("mlt: %*%v");
    console->set_formatter(std::move(formatter));
    const auto console_level = verbosity >= 2   ? spdlog::level::trace
                               : verbosity == 1 ? spdlog::level::debug
                                                : spdlog::level::info;
    console->set_level(console_level);
    std::vector<spdlog::sink_ptr> sinks{console};
    if (!file_path.empty()) {
        try {
            std::filesystem::create_directories(std::filesystem::path(file_path).parent_path());
            auto file = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(file_path, 1 << 20, 3);
            file->set_pattern("%Y-%m-%d %H:%M:%S.%e [%P] %l: %v");
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
