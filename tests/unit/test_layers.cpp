// The layers of docs/architecture.md: a file of one layer includes only headers of its own
// layer and of the layers before it (util, config, ssh, transfer, job, train, commands, cli).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kLayers{"util", "config", "ssh",      "transfer",
                                       "job",  "train",  "commands", "cli"};

int rank_of(const std::string& layer) {
    const auto it = std::find(kLayers.begin(), kLayers.end(), layer);
    return it == kLayers.end() ? -1 : static_cast<int>(it - kLayers.begin());
}

// "file: includes mlt/<layer>/..." for every include of a later layer under `root/<layer>`.
std::vector<std::string> upward_includes(const fs::path& root) {
    static const std::regex include(R"re(#include\s+"mlt/(\w+)/)re");
    std::vector<std::string> found;
    for (const std::string& layer : kLayers) {
        if (!fs::exists(root / layer)) continue;
        for (const auto& entry : fs::recursive_directory_iterator(root / layer)) {
            if (!entry.is_regular_file()) continue;
            std::ifstream in(entry.path());
            for (std::string line; std::getline(in, line);) {
                std::smatch m;
                if (!std::regex_search(line, m, include)) continue;
                if (rank_of(m[1]) > rank_of(layer))
                    found.push_back(entry.path().string() + ": " + line);
            }
        }
    }
    return found;
}

TEST(Layers, NoFileIncludesALaterLayer) {
    const fs::path source(MLT_SOURCE_DIR);
    for (const fs::path& root : {source / "src", source / "include" / "mlt"}) {
        ASSERT_TRUE(fs::exists(root / "train")) << root;
        const auto found = upward_includes(root);
        EXPECT_TRUE(found.empty())
            << found.size() << " upward include(s), the first: " << found.front();
    }
}

TEST(Layers, TheCheckSeesAnUpwardInclude) {
    const fs::path dir = fs::temp_directory_path() / "mlt-layers-test";
    fs::remove_all(dir);
    fs::create_directories(dir / "train");
    std::ofstream(dir / "train" / "engine.cpp") << "#include \"mlt/commands/train.h\"\n";
    EXPECT_EQ(upward_includes(dir).size(), 1u);
    fs::remove_all(dir);
}

}  // namespace
