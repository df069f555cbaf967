// Reporter: the one sink of all output, and PrefixReporter for the lines of a node.
#include "mlt/util/reporter.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "mlt/util/log.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

constexpr std::string_view kPrefix = "mlt: ";
// Back to the line's start, then clear to its end.
constexpr std::string_view kEraseLine = "\r\033[K";
// Clear to the end of the line: written after the text, so a redraw with a shorter line
// hides the end of the previous one without the flicker of erasing first.
constexpr std::string_view kEraseToEnd = "\033[K";
// The longest line of mlt's own that is shown whole; the rest of it is cut (printable()).
constexpr size_t kMaxShownLine = 8192;

void put(std::FILE* stream, std::string_view text) {
    if (text.empty()) return;
    std::fwrite(text.data(), 1, text.size(), stream);
    // Flushed at once, not per event: out and err may be one terminal, and what is still in
    // one stream's buffer would show up after what the other wrote later.
    std::fflush(stream);
}

// Written only by set_reporter(); atomic so that a reader never sees a torn pointer.
std::atomic<Reporter*> g_replacement{nullptr};

}  // namespace

void Reporter::warning(std::string_view line) {
    emit(Event::warning, "warning: " + printable(line, kMaxWarningLine));
}

TerminalReporter::TerminalReporter(std::FILE* out, std::FILE* err, bool interactive)
    : out_(out), err_(err), interactive_(interactive) {}

void TerminalReporter::emit(Event event, std::string_view text) {
    // mlt's own lines quote remote names, run ids and stderr: whatever they hold, no control
    // character of theirs reaches the terminal (console bytes are the caller's to filter).
    const std::string shown = event == Event::console    ? std::string()
                              : event == Event::progress ? printable(text, kMaxShownLine)
                                                         : printable_lines(text, kMaxShownLine);
    if (event != Event::console) text = shown;
    std::lock_guard<std::mutex> lock(mutex_);
    switch (event) {
        case Event::progress:
            show_progress_locked(text);
            return;
        case Event::console:
            if (text.empty()) return;
            erase_progress_locked();
            put(out_, text);
            console_mid_line_ = text.back() != '\n';
            break;
        case Event::notice:
            write_line_locked(out_, kPrefix, text);
            break;
        case Event::alert:
            write_line_locked(err_, kPrefix, text);
            break;
        case Event::warning:
            write_line_locked(err_, kPrefix, text);
            log_to_file(text);
            break;
        case Event::log:
            // The spdlog pattern has put "mlt: " and the level in already.
            write_line_locked(err_, {}, text);
            break;
    }
    redraw_progress_locked();
}

void TerminalReporter::write_line_locked(std::FILE* stream, std::string_view prefix,
                                         std::string_view text) {
    std::string line;
    if (stream == err_ && progress_drawn_) {
        // Erased in the same write as the line that replaces it: no blank frame in between.
        line = kEraseLine;
        progress_drawn_ = false;
    } else {
        erase_progress_locked();
    }
    // Only on a terminal: in a file or pipe the console bytes must stay as the job wrote
    // them, and there no line gets overwritten anyway.
    if (interactive_ && console_mid_line_) {
        line += '\n';
        console_mid_line_ = false;
    }
    line.append(prefix).append(text) += '\n';
    put(stream, line);
}

void TerminalReporter::show_progress_locked(std::string_view text) {
    // Without a terminal a redrawn line would pile up as many lines (or `\r`s in a log file).
    if (!interactive_) return;
    if (text.empty()) {
        erase_progress_locked();
        progress_.clear();
        return;
    }
    std::string line;
    // The `\r` would go back over the console's unfinished line and overwrite it.
    if (console_mid_line_) {
        line = "\n";
        console_mid_line_ = false;
    }
    line.append("\r").append(text).append(kEraseToEnd);
    put(err_, line);
    progress_.assign(text);
    progress_drawn_ = true;
}

void TerminalReporter::erase_progress_locked() {
    if (!progress_drawn_) return;
    put(err_, kEraseLine);
    progress_drawn_ = false;
}

void TerminalReporter::redraw_progress_locked() {
    // Not after an unfinished console line: see show_progress_locked.
    if (progress_.empty() || progress_drawn_ || console_mid_line_) return;
    put(err_, std::string("\r").append(progress_).append(kEraseToEnd));
    progress_drawn_ = true;
}

PrefixReporter::PrefixReporter(Reporter& inner, std::string prefix)
    : inner_(inner), prefix_(std::move(prefix)) {}

PrefixReporter::~PrefixReporter() {
    flush();
}

void PrefixReporter::flush() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (held_.empty()) return;
    inner_.emit(Event::console, held_);
    held_.clear();
}

void PrefixReporter::emit(Event event, std::string_view text) {
    if (event == Event::log || event == Event::progress) {
        // A log line is about mlt as a whole; a prefix on the progress line would push it
        // past the width it was cut to.
        inner_.emit(event, text);
        return;
    }
    std::string prefixed;
    prefixed.reserve(text.size() + prefix_.size());
    if (event != Event::console) {
        // A notice or alert is whole lines: the first line starts here.
        prefixed = prefix_;
        for (char c : text) {
            prefixed += c;
            if (c == '\n') prefixed += prefix_;
        }
        inner_.emit(event, prefixed);
        return;
    }
    // Locked across the inner emit: two threads' pieces must reach it in the order in which
    // held_ saw them.
    std::lock_guard<std::mutex> lock(mutex_);
    std::string whole;  // the complete lines of this piece, prefixed
    for (char c : text) {
        if (held_.empty()) held_ = prefix_;  // the prefix waits for the line's first byte
        held_ += c;
        if (c == '\n' || c == '\r' || held_.size() >= kMaxHeldLine) {
            whole += held_;
            held_.clear();
        }
    }
    if (!whole.empty()) inner_.emit(event, whole);
}

bool stderr_is_terminal() {
    // TERM=dumb (Emacs shells, some CI runners) is a tty that does not understand ESC[K.
    const char* term = std::getenv("TERM");
    return ::isatty(STDERR_FILENO) == 1 && term != nullptr && *term != '\0' &&
           std::strcmp(term, "dumb") != 0;
}

Reporter& reporter() {
    if (Reporter* replacement = g_replacement.load(std::memory_order_acquire)) return *replacement;
    // Never destroyed: a log line written while static objects are torn down at exit must
    // still find it.
    static Reporter* const kDefault = new TerminalReporter(stdout, stderr, stderr_is_terminal());
    return *kDefault;
}

void set_reporter(Reporter* replacement) {
    g_replacement.store(replacement, std::memory_order_release);
}

}  // namespace mlt
