// ConsoleFilter: a remote console stream without the sequences that act on the terminal.
#include "mlt/util/console_filter.h"

namespace mlt {

namespace {

constexpr unsigned char kEsc = 0x1b;
constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD

// The length of the UTF-8 character that `lead` starts (2 to 4), or 0 for a byte that starts
// none (ASCII, a continuation byte, C0 and C1 give overlongs, F5..FF lie past U+10FFFF).
size_t utf8_length_of(unsigned char lead) {
    if (lead >= 0xc2 && lead <= 0xdf) return 2;
    if (lead >= 0xe0 && lead <= 0xef) return 3;
    if (lead >= 0xf0 && lead <= 0xf4) return 4;
    return 0;
}

// Whether `b` may stand at `index` (1..3) of the character that `lead` starts: a continuation
// byte, and for the second byte the ranges that leave out overlongs, surrogates and code
// points above U+10FFFF.
bool continues(unsigned char lead, size_t index, unsigned char b) {
    if ((b & 0xc0) != 0x80) return false;
    if (index != 1) return true;
    if (lead == 0xe0) return b >= 0xa0;
    if (lead == 0xed) return b <= 0x9f;
    if (lead == 0xf0) return b >= 0x90;
    if (lead == 0xf4) return b <= 0x8f;
    return true;
}

// The C0 controls that pass: line feed, carriage return (progress bars), tab, backspace.
bool passes(unsigned char c) {
    return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\r' || c == '\t' || c == '\b';
}

// A finished CSI sequence that may pass: SGR (colours and attributes), or erase in line.
// No private marker (`?`, `>`: `CSI > ... m` sets key modifiers) and no intermediate byte.
bool allowed_csi(const std::string& params, unsigned char final_byte) {
    if (final_byte == 'm') return params.find_first_not_of("0123456789;:") == std::string::npos;
    if (final_byte == 'K') return params.empty() || params == "0" || params == "1" || params == "2";
    return false;
}

}  // namespace

ConsoleFilter::ConsoleFilter(bool raw) : raw_(raw) {}

std::string ConsoleFilter::feed(std::string_view bytes) {
    if (raw_) return std::string(bytes);
    std::string out;
    out.reserve(bytes.size());
    size_t i = 0;
    while (i < bytes.size()) {
        // Plain text in the ground state, the bulk of a console log, is copied in runs.
        if (state_ == State::ground && utf8_size_ == 0) {
            size_t end = i;
            while (end < bytes.size() && passes(static_cast<unsigned char>(bytes[end]))) ++end;
            out.append(bytes.substr(i, end - i));
            if (end == bytes.size()) break;
            i = end;
        }
        byte(static_cast<unsigned char>(bytes[i++]), out);
    }
    return out;
}

void ConsoleFilter::byte(unsigned char b, std::string& out) {
    if (utf8_size_ > 0) {
        if (continues(utf8_[0], utf8_size_, b)) {
            utf8_[utf8_size_++] = b;
            if (utf8_size_ < utf8_length_) return;
            unsigned cp = utf8_[0] & (utf8_length_ == 2 ? 0x1f : utf8_length_ == 3 ? 0x0f : 0x07);
            for (size_t k = 1; k < utf8_length_; ++k) cp = cp << 6 | (utf8_[k] & 0x3f);
            const std::string bytes(reinterpret_cast<const char*>(utf8_), utf8_length_);
            utf8_size_ = 0;
            code_point(cp, bytes, out);
            return;
        }
        // A broken character: its bytes are not UTF-8, and `b` starts afresh.
        flush_utf8_as_invalid(out);
    }
    if (b < 0x80) return ascii(b, out);
    utf8_length_ = utf8_length_of(b);
    if (utf8_length_ == 0) return invalid(b, out);
    utf8_[0] = b;
    utf8_size_ = 1;
}

void ConsoleFilter::flush_utf8_as_invalid(std::string& out) {
    const size_t n = utf8_size_;
    utf8_size_ = 0;
    for (size_t k = 0; k < n; ++k) invalid(utf8_[k], out);
}

void ConsoleFilter::code_point(unsigned cp, std::string_view bytes, std::string& out) {
    if (cp <= 0x9f) {
        // A C1 control (here as UTF-8, U+0080..U+009F), which a UTF-8 terminal takes as its
        // 7-bit form ESC Fe: U+009B is `ESC [`, U+009D `ESC ]`, U+009C `ESC \` (ST).
        ascii(kEsc, out);
        ascii(static_cast<unsigned char>(cp - 0x40), out);
        return;
    }
    switch (state_) {
        case State::ground:
            out.append(bytes);
            return;
        case State::escape:
        case State::escape_intermediate:
            state_ = State::ground;  // not a sequence after all: the character is text
            out.append(bytes);
            return;
        case State::csi:
            csi_valid_ = false;
            return;
        case State::osc:
        case State::string:
            return;  // part of the string, dropped with it
    }
}

void ConsoleFilter::invalid(unsigned char b, std::string& out) {
    switch (state_) {
        case State::escape:
        case State::escape_intermediate:
            state_ = State::ground;
            [[fallthrough]];
        case State::ground:
            // A raw 0x80..0x9F is a C1 control to a terminal that is not in UTF-8 mode.
            if (b < 0x80 || b > 0x9f) out.append(kReplacement);
            return;
        case State::csi:
            csi_valid_ = false;
            return;
        case State::osc:
        case State::string:
            return;
    }
}

void ConsoleFilter::ascii(unsigned char c, std::string& out) {
    // From any state, as a terminal's parser: CAN and SUB cancel a sequence, ESC starts one
    // (in a string it ends the string: `ESC \` is ST).
    if (c == 0x18 || c == 0x1a || c == kEsc) {
        state_ = c == kEsc ? State::escape : State::ground;
        csi_.clear();
        return;
    }
    switch (state_) {
        case State::ground:
            if (passes(c)) out += static_cast<char>(c);
            return;
        case State::escape:
        case State::escape_intermediate:
            return escape(c, out);
        case State::csi:
            return csi(c, out);
        case State::osc:
            if (c == 0x07) state_ = State::ground;  // BEL ends an OSC string (xterm)
            return;
        case State::string:
            return;
    }
}

void ConsoleFilter::escape(unsigned char c, std::string& out) {
    // A control inside a sequence acts at once, and the sequence goes on (as in a terminal).
    if (c < 0x20) {
        if (passes(c)) out += static_cast<char>(c);
        return;
    }
    if (c == 0x7f) return;
    if (c < 0x30) {
        state_ = State::escape_intermediate;  // `ESC ( 0` and the like: dropped at the end
        return;
    }
    if (state_ == State::escape) {
        switch (c) {
            case '[':
                state_ = State::csi;
                csi_.clear();
                csi_valid_ = true;
                return;
            case ']':
                state_ = State::osc;
                return;
            case 'P':  // DCS
            case 'X':  // SOS
            case '^':  // PM
            case '_':  // APC
                state_ = State::string;
                return;
            default:
                break;
        }
    }
    state_ = State::ground;  // any other ESC sequence (ESC c, ESC 7, ESC D, ...) is dropped
}

void ConsoleFilter::csi(unsigned char c, std::string& out) {
    if (c < 0x20) {
        if (passes(c)) out += static_cast<char>(c);
        return;
    }
    if (c == 0x7f) return;
    if (c < 0x40) {  // parameter and intermediate bytes
        if (csi_.size() < kMaxCsi)
            csi_ += static_cast<char>(c);
        else
            csi_valid_ = false;
        return;
    }
    state_ = State::ground;
    if (csi_valid_ && allowed_csi(csi_, c))
        out.append("\x1b[").append(csi_) += static_cast<char>(c);
    csi_.clear();
}

}  // namespace mlt
