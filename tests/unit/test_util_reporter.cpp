// The reporters: TerminalReporter (what reaches stdout and stderr), PrefixReporter, the
// process's reporter, and spdlog's console sink feeding it.

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "mlt/util/log.h"
#include "mlt/util/paths.h"
#include "mlt/util/reporter.h"
#include "transfer_fixtures.h"

namespace {

using mlt::Event;

// A Reporter that keeps each event as "<event>|<text>", which reads well in a failure.
class Recorder : public mlt::Reporter {
  public:
    void emit(Event event, std::string_view text) override {
        // In Event's order.
        static const char* const kNames[] = {"console", "notice",  "alert",
                                             "log",     "warning", "progress"};
        std::lock_guard<std::mutex> lock(mutex_);
        events_.push_back(std::string(kNames[static_cast<int>(event)]) + "|" + std::string(text));
    }
    std::vector<std::string> events() {
        std::lock_guard<std::mutex> lock(mutex_);
        return events_;
    }

  private:
    std::mutex mutex_;
    std::vector<std::string> events_;
};

using Events = std::vector<std::string>;

// A temporary file the test reads back whole.
class TempStream {
  public:
    std::FILE* get() const { return file_.get(); }
    std::string read() const {
        std::string text;
        std::rewind(file_.get());
        char buf[4096];
        for (size_t n; (n = std::fread(buf, 1, sizeof buf, file_.get())) > 0;) text.append(buf, n);
        return text;  // the next write goes to the end again: tmpfile()'s "w+" has no append
    }

  private:
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{std::tmpfile(), &std::fclose};
};

// A TerminalReporter with separate stdout and stderr files.
struct Streams {
    explicit Streams(bool interactive) : reporter(out.get(), err.get(), interactive) {}
    TempStream out, err;
    mlt::TerminalReporter reporter;
};

// Installs a replacement for the process's reporter for one scope.
class ReplacedReporter {
  public:
    explicit ReplacedReporter(mlt::Reporter& replacement) { mlt::set_reporter(&replacement); }
    ~ReplacedReporter() { mlt::set_reporter(nullptr); }
    ReplacedReporter(const ReplacedReporter&) = delete;
    ReplacedReporter& operator=(const ReplacedReporter&) = delete;
};

TEST(TerminalReporter, ConsoleBytesStayByteExactInAFile) {
    Streams s(false);
    s.reporter.console("epoch 1");
    s.reporter.notice("uploaded 3 files");
    s.reporter.console(" loss 0.5\nepoch");
    s.reporter.alert("link lost, reconnecting");
    s.reporter.emit(Event::log, "mlt: warning: slow link");
    s.reporter.emit(Event::progress, "mlt: upload: 1 file");
    s.reporter.console(" 2\n");
    s.reporter.emit(Event::progress, "");
    s.reporter.console("");
    // No "\n" is added to end the console's line: the notice sits inside it, and taking it
    // out gives the console bytes back exactly.
    const std::string out = s.out.read();
    EXPECT_EQ(out, "epoch 1mlt: uploaded 3 files\n loss 0.5\nepoch 2\n");
    const std::string notice = "mlt: uploaded 3 files\n";
    EXPECT_EQ(std::string(out).erase(out.find(notice), notice.size()),
              "epoch 1 loss 0.5\nepoch 2\n");
    // Progress is dropped; alerts and log lines go to stderr, nothing else does.
    EXPECT_EQ(s.err.read(), "mlt: link lost, reconnecting\nmlt: warning: slow link\n");
}

TEST(TerminalReporter, ProgressIsRedrawnInPlaceAndErasedByEmptyText) {
    Streams s(true);
    s.reporter.emit(Event::progress, "mlt: upload: 10%");
    s.reporter.emit(Event::progress, "mlt: upload: 20%");
    EXPECT_EQ(s.err.read(), "\rmlt: upload: 10%\033[K\rmlt: upload: 20%\033[K");
    s.reporter.emit(Event::progress, "");
    s.reporter.emit(Event::progress, "");  // nothing left to erase
    EXPECT_EQ(s.err.read(), "\rmlt: upload: 10%\033[K\rmlt: upload: 20%\033[K\r\033[K");
    s.reporter.emit(Event::log, "mlt: done");  // an erased line is not drawn again
    EXPECT_EQ(s.out.read(), "");
    EXPECT_EQ(s.err.read(), "\rmlt: upload: 10%\033[K\rmlt: upload: 20%\033[K\r\033[Kmlt: done\n");
}

TEST(TerminalReporter, ProgressIsErasedBeforeOtherOutputAndDrawnAgainAfterIt) {
    Streams s(true);
    const std::string line = "\rP\033[K";
    const std::string erase = "\r\033[K";
    s.reporter.emit(Event::progress, "P");
    s.reporter.emit(Event::log, "mlt: warning: slow link");
    EXPECT_EQ(s.err.read(), line + erase + "mlt: warning: slow link\n" + line);
    s.reporter.alert("link lost");
    EXPECT_EQ(s.err.read(), line + erase + "mlt: warning: slow link\n" + line + erase +
                                "mlt: link lost\n" + line);
    // Output on stdout: erased and drawn again on stderr around it.
    const std::string before = s.err.read();
    s.reporter.notice("uploaded");
    s.reporter.console("step 1\n");
    EXPECT_EQ(s.out.read(), "mlt: uploaded\nstep 1\n");
    EXPECT_EQ(s.err.read(), before + erase + line + erase + line);
}

TEST(TerminalReporter, ALineWhileTheConsoleIsMidLineStartsOnANewLine) {
    Streams s(true);
    s.reporter.console("epoch 1");
    s.reporter.emit(Event::log, "mlt: warning: slow link");
    EXPECT_EQ(s.err.read(), "\nmlt: warning: slow link\n");
    s.reporter.alert("again");  // the console's line was ended already
    EXPECT_EQ(s.err.read(), "\nmlt: warning: slow link\nmlt: again\n");
    s.reporter.console(" loss 0.5\nepoch 2");
    s.reporter.notice("note");  // on stdout, so the "\n" goes there
    s.reporter.console(" loss 0.4\n");
    s.reporter.alert("no newline after a finished line");
    EXPECT_EQ(s.out.read(), "epoch 1 loss 0.5\nepoch 2\nmlt: note\n loss 0.4\n");
    EXPECT_EQ(s.err.read(),
              "\nmlt: warning: slow link\nmlt: again\nmlt: no newline after a finished line\n");
}

TEST(TerminalReporter, ProgressWaitsForTheEndOfAConsoleLine) {
    Streams s(true);
    s.reporter.emit(Event::progress, "P");
    s.reporter.console("epoch");  // a redraw would overwrite "epoch" with the `\r`
    EXPECT_EQ(s.err.read(), "\rP\033[K\r\033[K");
    s.reporter.console(" 1\n");
    EXPECT_EQ(s.err.read(), "\rP\033[K\r\033[K\rP\033[K");
    s.reporter.console("epoch");
    s.reporter.emit(Event::progress, "Q");  // a new line keeps "epoch" visible
    EXPECT_EQ(s.err.read(), "\rP\033[K\r\033[K\rP\033[K\r\033[K\n\rQ\033[K");
    EXPECT_EQ(s.out.read(), "epoch 1\nepoch");
}

TEST(PrefixReporter, ConsoleLinesArePassedOnWholeAndPrefixed) {
    Recorder inner;
    {
        mlt::PrefixReporter r(inner, "[1] ");
        r.console("ep");
        r.console("och 1\nep");
        r.console("och 2\n");
        r.console("\n");
        r.console("");
        r.console(" 10%\r 20%\r");  // a progress bar: each redraw is a line of its own
        r.console("x");
        EXPECT_EQ(inner.events(), (Events{"console|[1] epoch 1\n", "console|[1] epoch 2\n",
                                          "console|[1] \n", "console|[1]  10%\r[1]  20%\r"}));
    }
    // The unfinished line goes out when the reporter goes.
    EXPECT_EQ(inner.events().back(), "console|[1] x");
}

TEST(PrefixReporter, TwoNodesLinesNeverMixMidLine) {
    Recorder inner;
    mlt::PrefixReporter zero(inner, "[0] ");
    mlt::PrefixReporter one(inner, "[1] ");
    zero.console("loss=0.");
    one.console("loss=1.5\n");
    zero.console("25\n");
    EXPECT_EQ(inner.events(), (Events{"console|[1] loss=1.5\n", "console|[0] loss=0.25\n"}));
}

TEST(PrefixReporter, AnEndlessLineIsPassedOnInBoundedPieces) {
    Recorder inner;
    mlt::PrefixReporter r(inner, "[1] ");
    r.console(std::string(mlt::PrefixReporter::kMaxHeldLine, 'a'));
    ASSERT_EQ(inner.events().size(), 1u);
    EXPECT_EQ(inner.events()[0].size(),
              std::string("console|").size() + mlt::PrefixReporter::kMaxHeldLine);
    r.flush();
    EXPECT_EQ(inner.events().size(), 2u);
    EXPECT_EQ(inner.events()[1], "console|[1] " + std::string(4, 'a'));
}

TEST(PrefixReporter, NoticesAndAlertsArePrefixedLogAndProgressAreNot) {
    Recorder inner;
    mlt::PrefixReporter r(inner, "[1] ");
    r.notice("uploaded 3 files");
    r.alert("link lost\nreconnecting");
    r.emit(Event::log, "mlt: warning: slow link");
    r.emit(Event::progress, "mlt: upload: 10%");
    r.emit(Event::progress, "");
    EXPECT_EQ(inner.events(),
              (Events{"notice|[1] uploaded 3 files", "alert|[1] link lost\n[1] reconnecting",
                      "log|mlt: warning: slow link", "progress|mlt: upload: 10%", "progress|"}));
}

TEST(Reporter, SetReporterReplacesAndRestores) {
    mlt::Reporter* const original = &mlt::reporter();
    Recorder recorder;
    {
        ReplacedReporter replaced(recorder);
        EXPECT_EQ(&mlt::reporter(), &recorder);
        mlt::reporter().notice("hello");
    }
    EXPECT_EQ(&mlt::reporter(), original);
    EXPECT_EQ(recorder.events(), Events{"notice|hello"});
}

TEST(Reporter, SpdlogLinesReachTheReplacedReporter) {
    Recorder recorder;
    // Replaced after the setup: the sink looks the reporter up per message.
    mlt::setup_logging(0);
    {
        ReplacedReporter replaced(recorder);
        spdlog::warn("disk {} is full", "/tmp");
        spdlog::info("uploaded");
        spdlog::debug("not shown at verbosity 0");
        mlt::setup_logging(1);
        spdlog::debug("shown with -v");
        spdlog::trace("not shown with -v");
        mlt::setup_logging(0);
    }
    EXPECT_EQ(recorder.events(), (Events{"log|mlt: warning: disk /tmp is full", "log|mlt: uploaded",
                                         "log|mlt: debug: shown with -v"}));
}

// A run's warning goes through its reporter: a node's keeps its prefix, before "warning:",
// as its alerts do; the terminal shows it on stderr as spdlog's warnings look.
TEST(PrefixReporter, AWarningIsPrefixedAndShownAsSpdlogsWarningsLook) {
    Recorder inner;
    mlt::PrefixReporter r(inner, "[rank 1] ");
    r.warning("the job of m ended without recording an exit status");
    EXPECT_EQ(inner.events(),
              (Events{"warning|[rank 1] warning: the job of m ended without recording an exit "
                      "status"}));
    Streams s(false);
    mlt::PrefixReporter node(s.reporter, "[rank 1] ");
    node.warning("disk \x1b[2Jfull");
    EXPECT_EQ(s.err.read(), "mlt: [rank 1] warning: disk \\x1b[2Jfull\n");
    EXPECT_EQ(s.out.read(), "");
}

TEST(TerminalReporter, AWarningReachesTheFileLogOnceWithItsLevel) {
    mlt::test::TempDir dir;
    const std::string log = dir.path() + "/mlt.log";
    mlt::setup_logging(0, log);
    {
        Streams s(false);
        s.reporter.warning("the disk is full");
        EXPECT_EQ(s.err.read(), "mlt: warning: the disk is full\n");
    }
    mlt::setup_logging(0);  // no file log for the tests that follow
    const std::string text = mlt::read_file(log);
    EXPECT_NE(text.find("warning: the disk is full\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("warning: warning:"), std::string::npos) << text;
}

TEST(TerminalReporter, LinesOfMltsOwnReachTheTerminalEscaped) {
    Streams s(true);
    // A remote name in a notice, a remote's stderr in an alert, a log line and the progress
    // line: none of their controls reaches the terminal, and their lines stay lines.
    s.reporter.notice("resumed x\x1b]52;c;aGk=\x07.bin");
    s.reporter.alert("its last lines:\n\x1b[2Jcleared\n\x1b[?1049h");
    s.reporter.emit(Event::log,
                    "mlt: debug: tar said:\n\x1b]0;title\x07\xc2\x9b"
                    "2J");
    s.reporter.emit(Event::progress, "mlt: pull: a\x1b[Hb");
    EXPECT_EQ(s.out.read(), "mlt: resumed x\\x1b]52;c;aGk=\\x07.bin\n");
    EXPECT_EQ(s.err.read(),
              "mlt: its last lines:\n\\x1b[2Jcleared\n\\x1b[?1049h\n"
              "mlt: debug: tar said:\n\\x1b]0;title\\x07\\xc2\\x9b2J\n"
              "\rmlt: pull: a\\x1b[Hb\033[K");
    // Console bytes are the caller's to filter (ConsoleFilter): written as given.
    s.reporter.console("\x1b[31mred\x1b[0m\n");
    EXPECT_EQ(s.out.read(), "mlt: resumed x\\x1b]52;c;aGk=\\x07.bin\n\x1b[31mred\x1b[0m\n");
}

TEST(Reporter, SpdlogLinesAreEscapedLineByLine) {
    Recorder recorder;
    mlt::setup_logging(1);
    {
        ReplacedReporter replaced(recorder);
        spdlog::info("resumed {} after 5 bytes",
                     "a\x1b]0;t\x07"
                     "b");
        spdlog::debug("the login on {} said:\n{}", "h", "\x1b[2Jbanner\r\nline 2");
        spdlog::warn("odd name {}", "x\ny\x1b[H");
    }
    mlt::setup_logging(0);
    EXPECT_EQ(recorder.events(),
              (Events{"log|mlt: resumed a\\x1b]0;t\\x07b after 5 bytes",
                      "log|mlt: debug: the login on h said:\n\\x1b[2Jbanner\\r\nline 2",
                      "log|mlt: warning: odd name x\\ny\\x1b[H"}));
}

TEST(TerminalReporter, ConcurrentAlertsStayWholeLines) {
    // One file for both streams, as on a terminal, and interactive, so that every alert
    // must end the console's unfinished line first: a race on that shows as an alert glued
    // to console bytes.
    TempStream screen;
    mlt::TerminalReporter reporter(screen.get(), screen.get(), true);
    constexpr int kRounds = 5000;
    const std::string names = "abcd";
    auto work = [&reporter](char name) {
        for (int i = 0; i < kRounds; ++i) {
            reporter.console(std::string(1, name) + std::to_string(i) + (i % 7 == 6 ? "\n" : " "));
            reporter.alert(std::string("alert ") + name + std::to_string(i));
        }
    };
    std::vector<std::thread> threads;
    for (char name : names) threads.emplace_back(work, name);
    for (auto& t : threads) t.join();

    const std::string text = screen.read();
    size_t alerts = 0;
    std::vector<std::string> broken;
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
        const std::string line = text.substr(start, end - start);
        if (line.find("alert") == std::string::npos) continue;
        ++alerts;
        // Whole: "mlt: alert <name><number>" from the line's start, nothing else on it.
        if (line.rfind("mlt: alert ", 0) != 0 || line.find(' ', 11) != std::string::npos)
            broken.push_back(line);
    }
    EXPECT_EQ(alerts, names.size() * kRounds);
    EXPECT_EQ(broken.size(), 0u) << "first: " << (broken.empty() ? "" : broken.front());
    // Every console piece arrived.
    for (char name : names) {
        for (int i = 0; i < kRounds; i += 250) {
            const std::string piece = name + std::to_string(i) + (i % 7 == 6 ? "\n" : " ");
            EXPECT_NE(text.find(piece), std::string::npos) << piece;
        }
    }
}

}  // namespace
