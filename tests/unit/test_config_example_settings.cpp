// examples/user_settings.yaml tells the truth about the defaults it shows: each commented line
// of its "Less common keys" block, `# KEY: EXAMPLE  # default: TEXT`, names the default that
// the settings table (and so docs/settings.md) gives the key.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

#include "config/settings_table.h"
#include "mlt/util/paths.h"

namespace {

// The table of the keys under `ssh:`'s `parent` (empty: `ssh:` itself).
const std::vector<mlt::settings_detail::FieldDecl>& table_of(const std::string& parent) {
    if (parent == "nodes") return mlt::settings_detail::nodes_fields();
    if (parent == "transfer") return mlt::settings_detail::transfer_fields();
    if (parent == "watch") return mlt::settings_detail::watch_fields();
    return mlt::settings_detail::ssh_fields();
}

std::string without_backticks(std::string_view text) {
    std::string out;
    for (char c : text)
        if (c != '`') out += c;
    return out;
}

TEST(ExampleSettings, EveryDefaultItShowsIsTheTablesDefault) {
    const std::string text =
        mlt::read_file(std::string(MLT_SOURCE_DIR) + "/examples/user_settings.yaml");
    // `  # KEY: EXAMPLE   # default: TEXT`, or `# default of SUBKEY: TEXT` for a mapping.
    const std::regex line_re(R"(^  # ([a-z_]+): .*?\s+# default(?: of ([a-z_]+))?: (.*)$)");
    std::istringstream lines(text);
    std::string line;
    int checked = 0;
    while (std::getline(lines, line)) {
        std::smatch m;
        if (!std::regex_match(line, m, line_re)) continue;
        const bool nested = m[2].matched;
        const std::string key = nested ? m[2].str() : m[1].str();
        const auto* field =
            mlt::settings_detail::find_field(table_of(nested ? m[1].str() : ""), key);
        ASSERT_NE(field, nullptr) << "no such key: " << line;
        EXPECT_EQ(m[3].str(), without_backticks(field->default_text)) << line;
        ++checked;
    }
    EXPECT_GE(checked, 6) << "the block of less common keys and their defaults is gone";
}

}  // namespace
