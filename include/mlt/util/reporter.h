#pragma once

#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

namespace mlt {

// What a piece of output is; a Reporter decides where and how it appears.
enum class Event {
    console,   // bytes of the remote training's console log (filtered by the caller)
    notice,    // a line of mlt's own about what the run does ("uploaded 3 files ...")
    alert,     // a line of mlt's own that needs attention (link lost, signals), not a warning
    log,       // a formatted spdlog line (level prefix included), one line, no trailing newline
    warning,   // a warning of mlt's own from a run ("warning: ..."), shown as an alert is and
               // written to the file log too
    progress,  // the live progress line of a transfer: redrawn in place; empty text erases it
};

// The one sink of everything mlt shows. Implementations are thread-safe.
class Reporter {
  public:
    virtual ~Reporter() = default;
    // Shows one event; `text` has no "mlt: " prefix and (except console) no trailing newline.
    // Log and progress text is shown as given: it carries its own "mlt: " when it wants one.
    virtual void emit(Event event, std::string_view text) = 0;
    // Shows console bytes of the remote training.
    void console(std::string_view bytes) { emit(Event::console, bytes); }
    // Shows one line of mlt's own about what the run does.
    void notice(std::string_view line) { emit(Event::notice, line); }
    // Shows one line of mlt's own that needs attention.
    void alert(std::string_view line) { emit(Event::alert, line); }
    // Shows one warning of a run: through this reporter (a node's keeps its prefix), where
    // spdlog's would go around it. One line, escaped and cut as spdlog's warnings are
    // (printable(), kMaxWarningLine): a warning quotes outside text.
    void warning(std::string_view line);
};

// On a terminal and in pipes: console bytes and notices ("mlt: <line>\n") on `out`; alerts
// ("mlt: <line>\n"), log lines and the progress line on `err`. With `interactive` (err is a
// terminal that can redraw), the progress line is drawn as "\r<text>\033[K" and is erased
// before anything else is written and drawn again after it (not while the console is in the
// middle of a line: it would overwrite that line; it comes back with the next progress event
// or the console line's end); without it progress events are dropped. Any line written to
// `err` (or a notice to `out`) while the console stream is in the middle of a line first ends
// that line on the terminal ("\n" to the same stream, only when interactive, so that console
// bytes in a file or pipe stay byte-exact). Notices, alerts, log lines and the progress line
// are shown through printable_lines() (each line escaped, at most 8 KiB of it): no control
// character in them reaches the terminal. Console bytes are written as given (see
// ConsoleFilter). Flushes after each event. Write errors are ignored (nothing to report them
// to).
class TerminalReporter : public Reporter {
  public:
    // Writes to `out` and `err`, which must outlive it; neither is closed.
    TerminalReporter(std::FILE* out, std::FILE* err, bool interactive);
    // Writes `text` as described above.
    void emit(Event event, std::string_view text) override;

  private:
    void write_line_locked(std::FILE* stream, std::string_view prefix, std::string_view text);
    void show_progress_locked(std::string_view text);
    void erase_progress_locked();
    void redraw_progress_locked();

    std::FILE* const out_;
    std::FILE* const err_;
    const bool interactive_;

    std::mutex mutex_;               // guards everything below and the order of the writes
    std::string progress_;           // the progress line's text; empty when there is none
    bool progress_drawn_ = false;    // progress_ is on the terminal now
    bool console_mid_line_ = false;  // the last console byte written was not a newline
};

// Prefixes every line of another reporter's console bytes, notices and alerts with `prefix`
// (e.g. "[1] "), for several nodes in one terminal. Console bytes are passed on in whole
// lines only, so that the lines of several nodes never mix mid-line: a piece without a line
// end waits for the rest of its line (a "\r", as a progress bar redraws, ends a line too), up
// to kMaxHeldLine bytes, and for flush() or the destructor. Log and progress events pass
// through unchanged.
class PrefixReporter : public Reporter {
  public:
    static constexpr size_t kMaxHeldLine = 64 * 1024;

    // Passes events on to `inner`, which must outlive it.
    PrefixReporter(Reporter& inner, std::string prefix);
    // Passes on the unfinished line that is held back, if any.
    ~PrefixReporter() override;
    // Passes `text` on to the inner reporter, prefixed as described above.
    void emit(Event event, std::string_view text) override;
    // Passes on the held-back start of a line now, as it is.
    void flush();

  private:
    Reporter& inner_;
    const std::string prefix_;

    std::mutex mutex_;  // guards held_ and the order of console pieces
    std::string held_;  // the current line's bytes that have not been passed on, prefixed
};

// True when stderr is a terminal that can redraw a line in place: a tty, and TERM set and
// not "dumb".
bool stderr_is_terminal();

// The process's reporter: a TerminalReporter on stdout/stderr (interactive when stderr is a
// terminal with TERM set and not "dumb") unless replaced.
Reporter& reporter();
// Replaces the process's reporter (tests, a future event stream); nullptr restores the default.
// Not thread-safe with concurrent emit(): call it before work starts.
void set_reporter(Reporter* replacement);

}  // namespace mlt
