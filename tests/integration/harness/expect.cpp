#include "harness/expect.h"

#include <sstream>

#include "harness/files.h"

namespace mlt_test {

::testing::AssertionResult is_one_error_line(const std::string& err) {
    const std::string line = trim(err);
    if (line.rfind("mlt: error: ", 0) != 0) {
        return ::testing::AssertionFailure() << "stderr does not start with 'mlt: error: ':\n"
                                             << err;
    }
    if (line.find('\n') != std::string::npos) {
        return ::testing::AssertionFailure() << "stderr has more than one line:\n" << err;
    }
    return ::testing::AssertionSuccess();
}

std::string without_debug_lines(const std::string& err) {
    std::string kept;
    std::istringstream lines(err);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("mlt: debug: ", 0) != 0) kept += line + "\n";
    return kept;
}

::testing::AssertionResult has_text(const std::string& text, const std::string& needle) {
    if (text.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "expected to find '" << needle << "' in:\n" << text;
}

::testing::AssertionResult lacks_text(const std::string& text, const std::string& needle) {
    if (text.find(needle) == std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "did not expect '" << needle << "' in:\n" << text;
}

}  // namespace mlt_test
