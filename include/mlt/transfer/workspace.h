#pragma once

#include <string>
#include <vector>

#include "mlt/transfer/transfer.h"

namespace mlt {

// gitignore-style rules: `#` comments, `!` re-includes, a trailing `/` matches directories
// only, a pattern containing `/` (not only at the end) is anchored at the root, one without
// matches a name at any depth; `*`, `?`, `[..]` and `**` as in glob_match. The last matching
// rule decides.
class IgnoreRules {
  public:
    // Adds the rules of one file's text (e.g. .mltignore, .gitignore); `source` names that
    // file in ignored_by's answer.
    void add(const std::string& text, const std::string& source = {});
    // True when `path` (relative, `/`-separated) is ignored; `is_dir` for directories.
    bool ignored(const std::string& path, bool is_dir) const;
    // Why `path` is ignored ("SOURCE: RULE", the rule as written), or "" when it is not.
    std::string ignored_by(const std::string& path, bool is_dir) const;

  private:
    struct Rule {
        std::string pattern;
        bool negate = false;
        bool dir_only = false;
        bool anchored = false;
        std::string text;  // the line as written, for ignored_by
        std::string source;
    };
    // The rule that decides for `path` (the last matching one), or nullptr.
    const Rule* deciding_rule(const std::string& path, bool is_dir) const;
    std::vector<Rule> rules_;
};

// True for paths that usually hold secrets: anything in a `.ssh` directory, and files named
// .env, .env.*, id_*, .netrc, *.pem or *.key (`path` relative, `/`-separated; `is_dir` when
// it names a directory). Neither a workspace sync nor an upload_files wildcard sends them;
// an upload_files entry that names such a file sends it.
bool is_secret_path(const std::string& path, bool is_dir);

// True when `path` is a symlink whose target (through every link) is not inside `root`,
// does not exist, or is a secret by is_secret_path(): a walk below `root` does not send it,
// as it would send a file from elsewhere (say ~/.ssh/id_rsa) or one the deny-list refuses
// under another name (notes -> id_rsa). False for anything that is not a symlink.
bool links_outside(const std::string& root, const std::string& path);

// Never sent by a workspace sync, whatever the ignore files say: version control and mlt's
// own state, and is_secret_path. List such a file in upload_files to send it anyway.
bool is_never_synced(const std::string& path, bool is_dir);

// A file or directory (path ending in `/`) that an upload leaves out, and why.
struct LeftOutFile {
    std::string path;
    std::string reason;
};

// The files of a workspace directory to upload (remote_path relative to `root`), honouring
// `root/.mltignore` and `root/.gitignore` and is_never_synced. Directories that are ignored
// are not entered; symlinks to directories are not followed. Sorted. What it leaves out is
// appended to `left_out` when given (paths relative to `root`, in walk order).
std::vector<UploadItem> collect_workspace(const std::string& root,
                                          std::vector<LeftOutFile>* left_out = nullptr);

}  // namespace mlt
