#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mlt {

// Makes a console stream from elsewhere (a remote training's log) safe to write to a terminal.
// Fed the stream in chunks cut anywhere (a sequence may span chunks: the state carries over),
// it passes text (valid UTF-8), `\r`, `\n`, `\t`, `\b`, SGR colour sequences (`ESC [ params m`,
// params of digits, `;` and `:`) and erase in line (`ESC [ K`, `ESC [ 0-2 K`), and drops all
// else a terminal would act on: OSC (title, clipboard), DCS, SOS, PM and APC strings, every
// other CSI sequence (clear screen, cursor moves, modes), every other ESC sequence, the other
// C0 controls and DEL, the C1 controls U+0080..U+009F (each acts as its ESC form, as a UTF-8
// terminal takes it: U+009B starts a CSI sequence, U+009C ends a string) and the raw bytes
// 0x80..0x9F. Any other byte that is not UTF-8 becomes U+FFFD. Its state is bounded: a string
// sequence is skipped without being kept, and a CSI sequence longer than kMaxCsi bytes is
// dropped whole.
class ConsoleFilter {
  public:
    // The most parameter and intermediate bytes of a CSI sequence that is kept to be passed.
    static constexpr size_t kMaxCsi = 64;

    // With `raw`, feed() passes every byte as it is (`--raw-console`).
    explicit ConsoleFilter(bool raw = false);
    // What of `bytes` may be shown now, after what earlier calls held back. An incomplete
    // UTF-8 character or CSI sequence at the end is held for the next call.
    std::string feed(std::string_view bytes);
    // The bytes held back now (at most kMaxCsi + 4, whatever was fed).
    size_t held() const { return csi_.size() + utf8_size_; }

  private:
    enum class State { ground, escape, escape_intermediate, csi, osc, string };

    void byte(unsigned char b, std::string& out);
    void code_point(unsigned cp, std::string_view bytes, std::string& out);
    void invalid(unsigned char b, std::string& out);
    void ascii(unsigned char c, std::string& out);
    void escape(unsigned char c, std::string& out);
    void csi(unsigned char c, std::string& out);
    void flush_utf8_as_invalid(std::string& out);

    bool raw_;
    State state_ = State::ground;
    std::string csi_;             // the CSI sequence's bytes after `ESC [`, up to kMaxCsi
    bool csi_valid_ = true;       // false: the CSI sequence is dropped at its final byte
    unsigned char utf8_[4] = {};  // the start of a UTF-8 character
    size_t utf8_size_ = 0;        // bytes of it in utf8_
    size_t utf8_length_ = 0;      // bytes the whole character has
};

}  // namespace mlt
