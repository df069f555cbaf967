// Every console log name the docs and examples show is the one the binary writes:
// kConsoleLogPrefix, the model, ".log" (examples/README.md once said mlt_ssh_train_...).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "commands/run_context.h"
#include "mlt/util/paths.h"

namespace {

namespace fs = std::filesystem;

TEST(DocsConsoleLog, EveryNameShownIsTheBinarysName) {
    const fs::path root(MLT_SOURCE_DIR);
    std::vector<fs::path> files{root / "README.md"};
    for (const char* dir : {"docs", "examples"})
        for (const auto& entry : fs::recursive_directory_iterator(root / dir))
            if (entry.path().extension() == ".md" || entry.path().extension() == ".yaml")
                files.push_back(entry.path());
    // A name of a console log as people write it: WORD_ssh_train_MODEL.log.
    const std::regex name_re(R"(\b([A-Za-z]+_ssh_train_)[A-Za-z0-9_<>{}.-]*\.log)");
    int seen = 0;
    for (const auto& file : files) {
        const std::string text = mlt::read_file(file.string());
        for (std::sregex_iterator it(text.begin(), text.end(), name_re), end; it != end; ++it) {
            EXPECT_EQ((*it)[1].str(), mlt::command_detail::kConsoleLogPrefix)
                << file.string() << ": " << (*it)[0].str();
            ++seen;
        }
    }
    EXPECT_GT(seen, 5) << "the docs no longer name the console log";
}

}  // namespace
