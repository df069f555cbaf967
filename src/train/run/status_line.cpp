// StatusLine: the live line of a run that waits for its job.
#include "mlt/train/run/status_line.h"

namespace mlt {

void StatusLine::set(const std::string& key, const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (text.empty())
        parts_.erase(key);
    else
        parts_[key] = text;
    const std::string line = text_locked();
    // Emitted under the lock, so that two watchers' updates reach the terminal in order.
    reporter_.emit(Event::progress, line.empty() ? line : "mlt: " + line);
}

void StatusLine::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (parts_.empty()) return;
    parts_.clear();
    reporter_.emit(Event::progress, "");
}

std::string StatusLine::text() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return text_locked();
}

std::string StatusLine::text_locked() const {
    std::string line;
    for (const auto& [key, part] : parts_) {
        if (!line.empty()) line += " | ";
        line += part;
    }
    return line;
}

}  // namespace mlt
