#pragma once

#include <map>
#include <mutex>
#include <string>

#include "mlt/util/reporter.h"

namespace mlt {

// The one live line a run shows on a terminal while it waits for its job, beside the
// console output: parts that different watchers keep up to date (the elapsed time and cost,
// the last --sync-every pull, ...), shown in the order of their keys and joined with " | ",
// e.g. "mlt: 1h02m03s, $0.42 | synced 12:03:04: 2 files, 35.0 MiB". It travels as
// Event::progress, so a TerminalReporter redraws it in place and drops it where stderr is no
// terminal (what must reach a log too goes as a notice). Thread-safe: a watcher may update
// its part from its own thread.
class StatusLine {
  public:
    // Shows through `reporter`, which must outlive this object.
    explicit StatusLine(Reporter& reporter) : reporter_(reporter) {}
    // Erases the line when it is shown.
    ~StatusLine() { clear(); }
    StatusLine(const StatusLine&) = delete;
    StatusLine& operator=(const StatusLine&) = delete;

    // Sets the part `key` ("1-cost", "2-sync": the key orders the parts) and shows the line;
    // an empty `text` removes the part.
    void set(const std::string& key, const std::string& text);
    // Removes every part and erases the line (before a transfer's own progress line, and
    // at the end of the follow).
    void clear();
    // The line as it would be shown now, without "mlt: " (empty: nothing to show).
    std::string text() const;

  private:
    std::string text_locked() const;

    Reporter& reporter_;
    mutable std::mutex mutex_;
    std::map<std::string, std::string> parts_;
};

}  // namespace mlt
