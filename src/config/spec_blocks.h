#pragma once

// Where a statement of a Python model spec sits: at module level, inside a function, or in a
// branch that may not run. The literal reader uses it to tell which SshMixin assignments run
// when MLTK imports the spec. Private to src/config/.

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace mlt::settings_detail {

// The blocks around one line of the spec.
struct BlockContext {
    // The enclosing `def`s, outermost first, and the line of the innermost one.
    std::vector<std::string> functions;
    int function_line = 0;
    bool in_class = false;  // the outermost def is a method (its callers are unknown)
    // The innermost conditional block (`if`, `elif`, `else`, `for`, `while`, `except`,
    // `case`), empty when none, and its line.
    std::string branch;
    int branch_line = 0;
    bool in_main = false;  // inside `if __name__ == '__main__':`, which import never runs
};

// The block structure of a whole spec, read from its indentation.
class SpecBlocks {
  public:
    // Never fails: text that is not Python gives some context for every line.
    explicit SpecBlocks(std::string_view text);

    // The context of the logical line that holds 1-based `line` (module level when unknown).
    const BlockContext& at(int line) const;

    // Whether the statement at `context` runs when the spec is imported: false inside
    // `if __name__ == '__main__'` and inside a module-level function that nothing at module
    // level calls (a nested one also needs a call somewhere); methods count as called.
    bool reached_at_import(const BlockContext& context) const;

  private:
    std::vector<BlockContext> lines_;     // index: line
    std::set<std::string> module_calls_;  // names called outside any def
    std::set<std::string> calls_;         // names called anywhere
    BlockContext module_level_;
};

}  // namespace mlt::settings_detail
