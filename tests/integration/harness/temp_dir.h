#pragma once

#include <string>

namespace mlt_test {

// A fresh directory (mkdtemp under $TMPDIR or /tmp, absolute, symlinks resolved) that the
// destructor removes recursively, unless MLT_KEEP_TEST_DIRS=1. Throws std::runtime_error
// when the directory cannot be created.
class TempDir {
  public:
    explicit TempDir(const std::string& prefix = "mlt-it-");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    // The absolute path of the directory.
    const std::string& path() const { return path_; }
    // path() + "/" + name; nothing is created.
    std::string file(const std::string& name) const { return path_ + "/" + name; }

  private:
    std::string path_;
};

// Removes a file or directory tree (making directories writable first); missing is no error.
void remove_tree(const std::string& path);

}  // namespace mlt_test
