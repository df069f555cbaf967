// The exit codes come from one table (exit_code_of in include/mlt/util/error.h); this test
// walks it against docs/usage.md's "Exit status" paragraph, so that the two cannot drift.
#include <gtest/gtest.h>

#include <csignal>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "mlt/util/error.h"
#include "mlt/util/paths.h"

namespace {

using mlt::ErrorKind;

// One row of the table: "143" gives codes {143}; "N" (the training's own status) none.
struct Documented {
    std::vector<int> codes;  // empty: the training's own status
    std::string code_text;   // the first cell as written
    std::string meaning;
};

// The rows of docs/usage.md's "Exit status" table, in their order.
std::vector<Documented> documented_exit_codes() {
    const std::string doc = mlt::read_file(std::string(MLT_SOURCE_DIR) + "/docs/usage.md");
    const size_t begin = doc.find("Exit status");
    const size_t end = doc.find("Every error is one line", begin);
    if (begin == std::string::npos || end == std::string::npos) return {};
    static const std::regex row(R"(^\| ([^|]+) \| ([^|]+) \|$)");
    static const std::regex number(R"(\d+)");
    std::vector<Documented> items;
    std::istringstream lines(doc.substr(begin, end - begin));
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (!std::regex_match(line, m, row) || m[1] == "code") continue;
        Documented d;
        d.code_text = m[1];
        d.meaning = m[2];
        for (std::sregex_iterator it(d.code_text.begin(), d.code_text.end(), number), e; it != e;
             ++it)
            d.codes.push_back(std::stoi(it->str()));
        items.push_back(d);
    }
    return items;
}

// What the doc must say for the code of each kind: a phrase of that code's meaning.
const std::map<ErrorKind, std::string>& phrase_of_kind() {
    static const std::map<ErrorKind, std::string> phrases = {
        {ErrorKind::usage, "bad usage"},
        {ErrorKind::config, "settings, spec"},
        {ErrorKind::key, "spec or key"},
        {ErrorKind::io, "a local file that cannot be read or written"},
        {ErrorKind::io_after_run, "a local write failed after the training ran"},
        {ErrorKind::auth, "authentication failure"},
        {ErrorKind::host_key, "host key unknown/changed"},
        {ErrorKind::connect, "connection"},
        {ErrorKind::timeout, "silent link"},
        {ErrorKind::disconnected, "lost"},
        {ErrorKind::remote, "a remote command failed"},
        {ErrorKind::tampered, "tampering"},
        {ErrorKind::gone, "the run's remote dir was gone"},
        {ErrorKind::conflict, "job-state conflict"},
        {ErrorKind::interrupted, "interrupted"},
        {ErrorKind::terminated, "SIGTERM"},
        {ErrorKind::hangup, "SIGHUP"},
        {ErrorKind::internal, "an internal error"},
    };
    return phrases;
}

TEST(ExitCodes, UsageMdListsTheCodes) {
    const auto items = documented_exit_codes();
    ASSERT_GE(items.size(), 8u) << "docs/usage.md has no 'Exit status' table";
    EXPECT_TRUE(items[1].codes.empty());
    EXPECT_NE(items[1].meaning.find("the training's own status"), std::string::npos);
}

TEST(ExitCodes, EveryKindsCodeMeansWhatTheDocSays) {
    const auto items = documented_exit_codes();
    // internal stays the last kind: every kind up to it is in the table of phrases.
    for (int k = 0; k <= static_cast<int>(ErrorKind::internal); ++k) {
        const auto kind = static_cast<ErrorKind>(k);
        const auto phrase = phrase_of_kind().find(kind);
        ASSERT_NE(phrase, phrase_of_kind().end()) << "kind " << k << " has no phrase here";
        const int code = mlt::exit_code_of(kind);
        std::string meaning;
        for (const auto& d : items)
            for (int c : d.codes)
                if (c == code) meaning += d.meaning;
        EXPECT_NE(meaning.find(phrase->second), std::string::npos)
            << "kind " << k << " exits " << code << ", which docs/usage.md documents as '"
            << meaning << "', not as '" << phrase->second << "'";
    }
}

TEST(ExitCodes, EveryDocumentedCodeHasAKind) {
    for (const auto& d : documented_exit_codes()) {
        for (int code : d.codes) {
            if (code == mlt::exit_code::kOk) continue;  // success is no error
            // A run stopped at its limit or by a rule returns it after collecting: no error
            // either.
            if (code == mlt::exit_code::kLimit || code == mlt::exit_code::kRuled) continue;
            bool found = false;
            for (int k = 0; k <= static_cast<int>(ErrorKind::internal); ++k)
                found = found || mlt::exit_code_of(static_cast<ErrorKind>(k)) == code;
            EXPECT_TRUE(found) << "docs/usage.md documents exit " << code << " (" << d.meaning
                               << ") but no error kind has it";
        }
    }
}

// The help's table (mlt --help, mlt ssh --help) and the doc's are the same rows.
TEST(ExitCodes, UsageMdsTableIsTheHelpsTable) {
    const auto items = documented_exit_codes();
    ASSERT_EQ(items.size(), std::size(mlt::kExitCodeTable));
    for (size_t i = 0; i < items.size(); ++i) {
        EXPECT_EQ(items[i].code_text, mlt::kExitCodeTable[i].codes) << "row " << i;
        EXPECT_EQ(items[i].meaning, mlt::kExitCodeTable[i].meaning) << "row " << i;
    }
}

// The training's status passes, except where a script would take it for one of mlt's own.
TEST(ExitCodes, ATrainingsStatusNeverPassesAsOneOfMltsOwn) {
    for (int own : {2, 3, 4, 5, 6, 255}) EXPECT_EQ(mlt::training_exit_code(own), 1) << own;
    for (int passes : {0, 1, 7, 42, 127, 129, 130, 137, 143, 254})
        EXPECT_EQ(mlt::training_exit_code(passes), passes) << passes;
    const auto items = documented_exit_codes();
    ASSERT_GE(items.size(), 2u);
    EXPECT_NE(items[1].meaning.find("2, 3, 4, 5, 6 or 255): then 1"), std::string::npos)
        << items[1].meaning;
}

TEST(ExitCodes, SignalsEndWith128PlusTheirNumber) {
    EXPECT_EQ(mlt::exit_code_of(ErrorKind::interrupted), 128 + SIGINT);
    EXPECT_EQ(mlt::exit_code_of(ErrorKind::terminated), 128 + SIGTERM);
    EXPECT_EQ(mlt::exit_code_of(ErrorKind::hangup), 128 + SIGHUP);
    EXPECT_TRUE(mlt::is_signal(ErrorKind::terminated));
    EXPECT_FALSE(mlt::is_signal(ErrorKind::disconnected));
}

TEST(ExitCodes, AnErrorsCodeIsItsKinds) {
    EXPECT_EQ(mlt::io_error("cannot write x").code(), mlt::exit_code::kUsage);
    EXPECT_EQ(mlt::Error(ErrorKind::io_after_run, "cannot write x").code(), 1);
    EXPECT_EQ(mlt::Error(ErrorKind::internal, "cannot create an ssh session").code(), 1);
}

}  // namespace
