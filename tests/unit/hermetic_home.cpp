// The unit tests never see the real home: HOME is an empty temporary directory for the whole
// test binary. Some tests run the job scripts through a local shell, and `bash --login` would
// read the account's profile (pyenv or conda there cost a second per login, and a login killed
// midway can leave a lock that makes every later login wait); paths under `~` would land in the
// real home.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace {

class HermeticHome : public ::testing::Environment {
  public:
    void SetUp() override {
        if (const char* old = std::getenv("HOME")) saved_ = old;
        std::string pattern =
            (std::filesystem::temp_directory_path() / "mlt-unit-home-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) GTEST_FAIL() << "mkdtemp failed";
        home_ = pattern;
        ::setenv("HOME", home_.c_str(), 1);
    }
    void TearDown() override {
        if (saved_.empty())
            ::unsetenv("HOME");
        else
            ::setenv("HOME", saved_.c_str(), 1);
        std::error_code ignored;  // a leftover temp dir is no test failure
        std::filesystem::remove_all(home_, ignored);
    }

  private:
    std::string saved_, home_;
};

const ::testing::Environment* const kHome = ::testing::AddGlobalTestEnvironment(new HermeticHome);

}  // namespace
