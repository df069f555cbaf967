// ConsoleFilter: what of a remote console stream reaches the terminal. Text, SGR colours,
// erase in line and \r \n \t \b pass; strings (OSC, DCS, ...), other sequences and controls
// are dropped, however the stream is cut into chunks.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "mlt/util/console_filter.h"

namespace {

using mlt::ConsoleFilter;

std::string filtered(std::string_view text) {
    ConsoleFilter filter;
    return filter.feed(text);
}

// Fed one byte at a time.
std::string filtered_bytewise(std::string_view text) {
    ConsoleFilter filter;
    std::string out;
    for (char c : text) out += filter.feed(std::string_view(&c, 1));
    return out;
}

// True when `text` holds no byte a terminal acts on but the ones this filter lets through.
bool only_safe_controls(const std::string& text) {
    for (size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == 0x1b && i + 1 < text.size() && text[i + 1] == '[') continue;
        if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\b') return false;
        if (c == 0x7f) return false;
        // U+0080..U+009F in UTF-8, and raw C1 bytes outside a multi-byte character.
        if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9f)
            return false;
    }
    return true;
}

// A console stream with everything the filter must tell apart, and what shows of it.
const std::string kHostile =
    "epoch 1/3 \x1b[1;32mok\x1b[0m\n"     // SGR passes
    "\x1b]52;c;Y3VybCBldmlsIHwgc2gK\x07"  // OSC 52: clipboard write (BEL)
    "\x1b]52;c;ZXZpbA==\x1b\\"            // OSC 52 ended by ST
    "\x1b]0;pwned title\x07"              // window title
    "\x1b]2;other title\x1b\\"            // title, ST
    "\x1b[2J\x1b[3J\x1b[H\x1b[10;20H"     // clear screen, scrollback, cursor
    "\x1b[?1049h\x1b[?47h\x1b[?25l"       // alt screen, hide cursor
    "\033c"                               // full reset
    "\x1b(0\x1b#8\x1bM"                   // charset, DECALN, RI
    "\x1bP+q544e\x1b\\"                   // DCS (XTGETTCAP)
    "\x1b_apc payload\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\"
    "\x07\x0e\x0f\x0b\x0c\x7f"  // BEL, SO, SI, VT, FF, DEL
    "\xc2\x9b"
    "2J\xc2\x9d"
    "0;c1 title\xc2\x9c"                           // C1 CSI and OSC as UTF-8
    "\x9b\x9d\x90"                                 // raw C1 bytes
    "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80\t"  // UTF-8 text
    "10%\r20%\r\x1b[K30%\b\b\b\x1b[2Kdone\n";

TEST(ConsoleFilter, PlainTextAndUtf8PassUnchanged) {
    const std::string text =
        "loss 0.25, acc 0.91 \xe2\x9c\x93 caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x98\x80\n";
    EXPECT_EQ(filtered(text), text);
    EXPECT_EQ(filtered("a\tb\bc\r\n"), "a\tb\bc\r\n");
}

TEST(ConsoleFilter, SgrColoursAndEraseInLinePass) {
    for (const std::string seq :
         {"\x1b[m", "\x1b[0m", "\x1b[1;31m", "\x1b[38;5;208m", "\x1b[38;2;255;0;0m",
          "\x1b[38:2::255:0:0m", "\x1b[K", "\x1b[0K", "\x1b[1K", "\x1b[2K"})
        EXPECT_EQ(filtered("a" + seq + "b"), "a" + seq + "b") << seq.substr(1);
}

TEST(ConsoleFilter, ProgressBarRedrawsPass) {
    const std::string bar = "  10%|#         |\r  50%|#####     |\r 100%|##########|\n";
    EXPECT_EQ(filtered(bar), bar);
    EXPECT_EQ(filtered("\r\x1b[K 42%"), "\r\x1b[K 42%");
}

TEST(ConsoleFilter, Osc52ClipboardWriteIsDropped) {
    EXPECT_EQ(filtered("a\x1b]52;c;Y3VybCBldmlsIHwgc2gK\x07z"), "az");
    EXPECT_EQ(filtered("a\x1b]52;c;Y3VybCBldmlsIHwgc2gK\x1b\\z"), "az");
    EXPECT_EQ(filtered("a\xc2\x9d"
                       "52;c;ZXZpbA==\xc2\x9cz"),
              "az");  // C1 OSC and ST
}

TEST(ConsoleFilter, TitleSetIsDropped) {
    EXPECT_EQ(filtered("a\x1b]0;you have been pwned\x07z"), "az");
    EXPECT_EQ(filtered("a\x1b]2;title\x1b\\z"), "az");
    EXPECT_EQ(filtered("a\x1b]1;icon \xe2\x9c\x93\x07z"), "az");  // UTF-8 in the string
}

TEST(ConsoleFilter, ClearScreenAndCursorMovesAreDropped) {
    for (const std::string seq :
         {"\x1b[2J", "\x1b[3J", "\x1b[J", "\x1b[H", "\x1b[10;20H", "\x1b[5A", "\x1b[2;5r",
          "\x1b[6n", "\x1b[21t", "\x1b[?1K", "\x1b[>4;2m", "\x1b[?7m", "\x1b[1$m", "\x1b[3K"})
        EXPECT_EQ(filtered("a" + seq + "b"), "ab") << seq.substr(1);
}

TEST(ConsoleFilter, AltScreenAndPrivateModesAreDropped) {
    for (const std::string seq :
         {"\x1b[?1049h", "\x1b[?1049l", "\x1b[?47h", "\x1b[?25l", "\x1b[?1000h", "\x1b[?2004h"})
        EXPECT_EQ(filtered("a" + seq + "b"), "ab") << seq.substr(1);
}

TEST(ConsoleFilter, StringSequencesAreDropped) {
    EXPECT_EQ(filtered("a\x1bP+q544e\x1b\\z"), "az");              // DCS
    EXPECT_EQ(filtered("a\x1bP0|17/6c73\x07still\x1b\\z"), "az");  // BEL does not end a DCS
    EXPECT_EQ(filtered("a\x1b_apc\x1b\\z\x1b^pm\x1b\\z\x1bXsos\x1b\\z"), "azzz");
    EXPECT_EQ(filtered("a\xc2\x90"
                       "dcs\xc2\x9cz"),
              "az");  // C1 DCS and ST
}

TEST(ConsoleFilter, OtherEscapeSequencesAreDropped) {
    for (const std::string seq : {"\x1b"
                                  "c",
                                  "\x1b"
                                  "7",
                                  "\x1b"
                                  "8",
                                  "\x1b(0", "\x1b#8", "\x1bM",
                                  "\x1b"
                                  "D",
                                  "\x1b=", "\x1b%G", "\x1b (B"})
        EXPECT_EQ(filtered("a" + seq + "b"), "ab") << seq.substr(1);
}

TEST(ConsoleFilter, OtherControlsAreDropped) {
    EXPECT_EQ(filtered("a\x07\x01\x0e\x0f\x0b\x0c\x7fz"), "az");
    EXPECT_EQ(filtered(std::string("a") + '\0' + "z"), "az");
    // C1 controls as UTF-8 (U+0080..U+009F): NEL, IND, HTS, RI, a C1 CSI with its sequence.
    EXPECT_EQ(filtered("a\xc2\x85\xc2\x84\xc2\x88\xc2\x8d\xc2\x80z"), "az");
    EXPECT_EQ(filtered("a\xc2\x9b"
                       "2Jz"),
              "az");
    EXPECT_EQ(filtered("a\xc2\x9b"
                       "31mz"),
              "a\x1b[31mz");  // a C1 SGR passes in its 7-bit form
}

TEST(ConsoleFilter, RawC1BytesOutsideUtf8AreDroppedAndOtherBadBytesReplaced) {
    EXPECT_EQ(filtered("a\x9b"
                       "2J\x9d\x90\x80\x9fz"),
              "a2Jz");
    EXPECT_EQ(filtered("a\xff\xfez"), "a\xef\xbf\xbd\xef\xbf\xbdz");
    EXPECT_EQ(filtered("a\xc0\xafz"), "a\xef\xbf\xbd\xef\xbf\xbdz");      // overlong '/'
    EXPECT_EQ(filtered("a\xed\xa0\x80z"), "a\xef\xbf\xbd\xef\xbf\xbdz");  // surrogate
    EXPECT_EQ(filtered("a\xe2\x9c"
                       "z"),
              "a\xef\xbf\xbdz");  // cut character, 0x9c dropped
    // A 0x9b inside a real character is not a control: U+26DB passes whole.
    EXPECT_EQ(filtered("\xe2\x9b\x9b"), "\xe2\x9b\x9b");
}

TEST(ConsoleFilter, EscapeEndsAStringAndCancelEndsASequence) {
    EXPECT_EQ(filtered("\x1b]0;title\x1b[31mred"), "\x1b[31mred");
    EXPECT_EQ(filtered("\x1b[31\x18text"), "text");
    EXPECT_EQ(filtered("\x1b]0;title\x1atext"), "text");
}

TEST(ConsoleFilter, ControlsInsideASequenceActAtOnce) {
    EXPECT_EQ(filtered("\x1b[3\n1mx"), "\n\x1b[31mx");
    EXPECT_EQ(filtered("\x1b\r"
                       "c"),
              "\r");
}

TEST(ConsoleFilter, TheWholeHostileStreamShowsOnlyTextAndColours) {
    const std::string shown = filtered(kHostile);
    EXPECT_TRUE(only_safe_controls(shown)) << shown;
    EXPECT_EQ(shown,
              "epoch 1/3 \x1b[1;32mok\x1b[0m\n"
              "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80\t"
              "10%\r20%\r\x1b[K30%\b\b\b\x1b[2Kdone\n");
}

TEST(ConsoleFilter, SplitAtEveryByteGivesTheSameOutput) {
    const std::string whole = filtered(kHostile);
    EXPECT_EQ(filtered_bytewise(kHostile), whole);
    // Every cut into two chunks.
    for (size_t cut = 0; cut <= kHostile.size(); ++cut) {
        ConsoleFilter filter;
        std::string out = filter.feed(std::string_view(kHostile).substr(0, cut));
        out += filter.feed(std::string_view(kHostile).substr(cut));
        ASSERT_EQ(out, whole) << "cut at byte " << cut;
    }
}

TEST(ConsoleFilter, RandomChunksGiveTheSameOutput) {
    const std::string whole = filtered(kHostile);
    std::mt19937 random(37);
    for (int round = 0; round < 200; ++round) {
        ConsoleFilter filter;
        std::string out;
        for (size_t at = 0; at < kHostile.size();) {
            const size_t n = std::uniform_int_distribution<size_t>(1, 9)(random);
            out += filter.feed(std::string_view(kHostile).substr(at, n));
            at += n;
        }
        ASSERT_EQ(out, whole) << "round " << round;
    }
}

TEST(ConsoleFilter, SequencesSplitAcrossChunksPassWhenComplete) {
    ConsoleFilter filter;
    EXPECT_EQ(filter.feed("red: \x1b[3"), "red: ");
    EXPECT_EQ(filter.feed("1m"), "\x1b[31m");
    EXPECT_EQ(filter.feed("\xe2\x9c"), "");  // half a character waits
    EXPECT_EQ(filter.feed("\x93 \x1b]52;c;"), "\xe2\x9c\x93 ");
    EXPECT_EQ(filter.feed("Y3VybA=="), "");
    EXPECT_EQ(filter.feed("\x07"
                          "after"),
              "after");
}

TEST(ConsoleFilter, AnUnterminatedStringHoldsNothing) {
    ConsoleFilter filter;
    EXPECT_EQ(filter.feed("before\x1b]52;c;"), "before");
    const std::string payload(1 << 20, 'A');
    for (int i = 0; i < 8; ++i) {
        EXPECT_EQ(filter.feed(payload), "");
        EXPECT_EQ(filter.held(), 0u);
    }
    EXPECT_EQ(filter.feed("\x07visible"), "visible");
}

TEST(ConsoleFilter, AnEndlessCsiSequenceIsBoundedAndDropped) {
    ConsoleFilter filter;
    EXPECT_EQ(filter.feed("a\x1b[38;5"), "a");
    const std::string params(1 << 20, ';');
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(filter.feed(params), "");
        EXPECT_LE(filter.held(), ConsoleFilter::kMaxCsi + 4);
    }
    EXPECT_EQ(filter.feed("mb"), "b");  // too long to be an SGR: dropped whole
}

TEST(ConsoleFilter, RawModePassesEverything) {
    ConsoleFilter raw(true);
    EXPECT_EQ(raw.feed(kHostile), kHostile);
    EXPECT_EQ(raw.feed("\x1b]52;c;"), "\x1b]52;c;");
    EXPECT_EQ(raw.feed("x\x07"), "x\x07");
}

}  // namespace
