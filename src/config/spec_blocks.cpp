// The blocks of a model spec (functions, branches, the __main__ guard): whether a line runs
// when MLTK imports the spec.
#include "spec_blocks.h"

#include <algorithm>

#include "python_lexer.h"

namespace mlt::settings_detail {

namespace {

// One open block: its header's indent column, keyword and (for def/class) name.
struct Block {
    int indent = 0;
    std::string keyword;
    std::string name;
    int line = 0;
    bool main = false;
};

bool is_branch_keyword(std::string_view word) {
    static const std::string_view kWords[] = {"if",    "elif",   "else", "for",
                                              "while", "except", "case"};
    return std::find(std::begin(kWords), std::end(kWords), word) != std::end(kWords);
}

bool is_block_keyword(std::string_view word) {
    return is_branch_keyword(word) || word == "def" || word == "class" || word == "try" ||
           word == "finally" || word == "with";
}

// Whether the tokens after `if` read `__name__ == '__main__'` (either order, either quotes).
bool is_main_guard(PyTokens& tokens) {
    const PyToken& a = tokens.peek(1);
    const PyToken& op = tokens.peek(2);
    const PyToken& b = tokens.peek(3);
    if (!is_op(op, "==")) return false;
    auto is_name = [](const PyToken& t) {
        return t.kind == TokenKind::name && t.text == "__name__";
    };
    auto is_main = [](const PyToken& t) {
        return t.kind == TokenKind::string && t.literal && t.body == "__main__";
    };
    return (is_name(a) && is_main(b)) || (is_main(a) && is_name(b));
}

// The header starting at the current token (the first of a logical line), if it is one.
bool read_header(PyTokens& tokens, Block& block) {
    const PyToken& t = tokens.peek();
    if (t.kind != TokenKind::name) return false;
    size_t at = 0;
    if (t.text == "async" && tokens.peek(1).kind == TokenKind::name) at = 1;
    const PyToken& word = tokens.peek(at);
    if (!is_block_keyword(word.text)) return false;
    block.indent = t.pos.column;
    block.keyword = std::string(word.text);
    block.line = t.pos.line;
    if (block.keyword == "def" || block.keyword == "class")
        block.name = std::string(tokens.peek(at + 1).text);
    block.main = block.keyword == "if" && is_main_guard(tokens);
    return true;
}

BlockContext context_of(const std::vector<Block>& stack) {
    BlockContext c;
    bool seen_class = false;
    for (const Block& b : stack) {
        if (b.keyword == "class") seen_class = true;
        if (b.keyword == "def") {
            if (c.functions.empty()) c.in_class = seen_class;
            c.functions.push_back(b.name);
            c.function_line = b.line;
        }
        if (is_branch_keyword(b.keyword)) {
            c.branch = b.keyword;
            c.branch_line = b.line;
        }
        if (b.main) c.in_main = true;
    }
    return c;
}

bool in_function(const std::vector<Block>& stack) {
    return std::any_of(stack.begin(), stack.end(),
                       [](const Block& b) { return b.keyword == "def"; });
}

}  // namespace

SpecBlocks::SpecBlocks(std::string_view text) {
    PyTokens tokens(text);
    std::vector<Block> stack;
    int depth = 0;  // open brackets: line breaks inside them end no statement
    bool line_start = true;
    bool after_dot_or_def = false;
    BlockContext current;
    for (;;) {
        const PyToken& t = tokens.peek();
        if (t.kind == TokenKind::end) break;
        if (t.kind == TokenKind::newline) {
            if (depth == 0) line_start = true;
            tokens.take();
            continue;
        }
        if (line_start) {
            line_start = false;
            while (!stack.empty() && stack.back().indent >= t.pos.column) stack.pop_back();
            Block header;
            if (read_header(tokens, header)) stack.push_back(header);
            current = context_of(stack);
        }
        if (lines_.size() <= static_cast<size_t>(t.pos.line))
            lines_.resize(static_cast<size_t>(t.pos.line) + 1, current);
        lines_[static_cast<size_t>(t.pos.line)] = current;
        if (is_op(t, "(") || is_op(t, "[") || is_op(t, "{")) ++depth;
        if ((is_op(t, ")") || is_op(t, "]") || is_op(t, "}")) && depth > 0) --depth;
        if (t.kind == TokenKind::name && !after_dot_or_def && is_op(tokens.peek(1), "(")) {
            calls_.emplace(t.text);
            if (!in_function(stack)) module_calls_.emplace(t.text);
        }
        after_dot_or_def =
            is_op(t, ".") || (t.kind == TokenKind::name && (t.text == "def" || t.text == "class"));
        tokens.take();
    }
}

const BlockContext& SpecBlocks::at(int line) const {
    if (line < 0 || static_cast<size_t>(line) >= lines_.size()) return module_level_;
    return lines_[static_cast<size_t>(line)];
}

bool SpecBlocks::reached_at_import(const BlockContext& context) const {
    if (context.in_main) return false;
    if (context.functions.empty() || context.in_class) return true;
    if (!module_calls_.count(context.functions.front())) return false;
    return std::all_of(context.functions.begin() + 1, context.functions.end(),
                       [&](const std::string& f) { return calls_.count(f) > 0; });
}

}  // namespace mlt::settings_detail
