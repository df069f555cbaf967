#pragma once

#include <gtest/gtest.h>

#include <string>

namespace mlt_test {

// Success when `err` is exactly one line starting with "mlt: error: " (docs/usage.md, exit status:
// one clear line, details only with -v); the failure message quotes `err`.
::testing::AssertionResult is_one_error_line(const std::string& err);

// `err` without its lines that start with "mlt: debug: " (what -v adds), for
// is_one_error_line() on the stderr of a run with -v.
std::string without_debug_lines(const std::string& err);

// Success when `text` contains `needle`; the failure message quotes both.
::testing::AssertionResult has_text(const std::string& text, const std::string& needle);

// Success when `text` does not contain `needle`; the failure message quotes both.
::testing::AssertionResult lacks_text(const std::string& text, const std::string& needle);

}  // namespace mlt_test
