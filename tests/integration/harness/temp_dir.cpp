#include "harness/temp_dir.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace mlt_test {

TempDir::TempDir(const std::string& prefix) {
    const char* tmp = std::getenv("TMPDIR");
    std::string base = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
    std::string templ = base + "/" + prefix + "XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) == nullptr) {
        throw std::runtime_error("mkdtemp " + templ + ": " + std::strerror(errno));
    }
    // sshd and OpenSSH want absolute, canonical paths in their configs.
    char resolved[PATH_MAX];
    path_ = realpath(buf.data(), resolved) != nullptr ? resolved : buf.data();
}

TempDir::~TempDir() {
    const char* keep = std::getenv("MLT_KEEP_TEST_DIRS");
    if (keep != nullptr && std::string(keep) == "1") return;
    remove_tree(path_);
}

void remove_tree(const std::string& path) {
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path.c_str());
        return;
    }
    // A test may leave a directory without write/search permission (matters when not root).
    chmod(path.c_str(), 0700);
    if (DIR* dir = opendir(path.c_str())) {
        std::vector<std::string> names;
        while (const dirent* entry = readdir(dir)) {
            std::string name = entry->d_name;
            if (name != "." && name != "..") names.push_back(name);
        }
        closedir(dir);
        for (const auto& name : names) remove_tree(path + "/" + name);
    }
    rmdir(path.c_str());
}

}  // namespace mlt_test
