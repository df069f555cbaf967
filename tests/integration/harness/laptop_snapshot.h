#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mlt_test {

// What the laptop side holds under one path, as a snapshot records it.
struct FileState {
    char type = '?';         // 'f' file, 'd' directory, 'l' symlink, 'o' anything else
    std::uint64_t size = 0;  // st_size
    int mode = 0;            // permission bits, setuid/setgid/sticky included (07777)
    std::string digest;      // files: sha256 (of files up to 256 MiB; bigger: size and mtime)
    std::string target;      // symlinks: where they point

    bool operator==(const FileState& o) const {
        return type == o.type && size == o.size && mode == o.mode && digest == o.digest &&
               target == o.target;
    }
    bool operator!=(const FileState& o) const { return !(*this == o); }
    // "file 12 bytes 0644 sha256 ab12..." for messages.
    std::string describe() const;
};

// Every entry under some roots (links never followed), except the allowed paths (an entry
// that is one of them, or under one). Taken again with the same roots and allowed paths,
// it tells what appeared, vanished or changed in between.
class LaptopSnapshot {
  public:
    // Walks `roots` (absolute); `allowed` are absolute paths left out with all under them
    // (one ending in '*': every path that starts with the rest). A directory on the way to
    // an allowed path is not recorded itself (mlt creates ~/.mltk/models), what else lies
    // in it is. A root that does not exist is empty.
    static LaptopSnapshot take(const std::vector<std::string>& roots,
                               const std::vector<std::string>& allowed);
    // The same roots and allowed paths, now.
    LaptopSnapshot again() const { return take(roots_, allowed_); }

    const std::map<std::string, FileState>& entries() const { return entries_; }
    const std::vector<std::string>& allowed() const { return allowed_; }

  private:
    void walk(const std::string& path);
    bool is_allowed(const std::string& path) const;
    bool leads_to_allowed(const std::string& path) const;

    std::vector<std::string> roots_;
    std::vector<std::string> allowed_;
    std::map<std::string, FileState> entries_;
};

// Success when `after` holds exactly what `before` held; otherwise a failure that names
// every path that appeared, vanished or changed (with both states).
::testing::AssertionResult nothing_changed(const LaptopSnapshot& before,
                                           const LaptopSnapshot& after);

}  // namespace mlt_test
