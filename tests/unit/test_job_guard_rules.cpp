// The host's rule engine (guard_rules.sh, mlt_rules_tick) on the rules as the client writes them
// (rule_dialect.h): one corpus of console lines (tests/data/stop_rules_corpus.txt), fed in
// pieces cut mid-line over several ticks and a restart of the guard, under dash with mawk,
// BusyBox's sh and awk, and a host where every tool is BusyBox's; every decision is the
// corpus's, and the one std::regex ECMAScript makes on the rules as written. Then what a tick
// costs at most: a bounded read, no work without growth, a rule that fires once.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "local_remote.h"
#include "mlt/config/rule_dialect.h"
#include "mlt/config/stop_rule_spec.h"
#include "mlt/util/shell.h"
#include "remote_scripts.h"
#include "rules_corpus.h"

namespace fs = std::filesystem;

namespace mlt {
namespace {

using test::Corpus;
using test::CorpusLog;

// Every corpus rule is one the host evaluates, and std::regex decides every line as the
// corpus says: the corpus is right about the rules as written.
TEST(GuardRulesCorpus, EcmaScriptDecidesEveryLineAsTheCorpusSays) {
    const Corpus corpus = test::read_corpus();
    ASSERT_GE(corpus.rules.size(), 15u);
    ASSERT_GE(corpus.logs.size(), 3u);
    for (const auto& [id, rule] : corpus.rules) {
        const auto error = rule_error(rule);
        EXPECT_FALSE(error) << id << ": " << error->why;
    }
    for (const CorpusLog& log : corpus.logs)
        for (const auto& [id, rule] : corpus.rules) {
            const std::set<size_t> ecma = test::ecmascript_fires(rule, log);
            const std::set<size_t> said = test::corpus_fires(id, log);
            for (size_t i : ecma)
                EXPECT_TRUE(said.count(i)) << "rule " << id << " fires on corpus line "
                                           << log.lines[i].source_line << " by ECMAScript";
            for (size_t i : said)
                EXPECT_TRUE(ecma.count(i)) << "rule " << id << " does not fire on corpus line "
                                           << log.lines[i].source_line << " by ECMAScript";
        }
}

// A line as the host reports it: no control bytes, cut to 500 bytes.
std::string reported(const std::string& line) {
    std::string out;
    for (char c : line)
        if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) out += c;
    return out.substr(0, 500);
}

// One hit the host printed: the job dir's name, the state's offset after it, INDEX and LINE.
struct Hit {
    std::string dir;
    size_t offset = 0;
    std::string index;
    std::string line;
};

// Ticks every job dir under $1 once for each piece ($2...) appended to its console.log; a dir
// other than `all` has its FIRED reset after each hit (so that every line gets decided), `all`
// keeps it. Prints each hit as "DIR OFFSET INDEX<TAB>LINE", a failed tick as "DIR: status N".
constexpr const char* kFeed = R"sh(
top=$1; shift
for piece in "$@"; do
  for d in "$top"/*/; do
    d=${d%/}
    cat "$piece" >> "$d/console.log"
    while :; do
      hit=$(mlt_rules_tick "$d") || { echo "${d##*/}: status $?"; break; }
      [ -n "$hit" ] || break
      read -r off fired < "$d/rules.state"
      printf '%s %s %s\n' "${d##*/}" "$off" "$hit"
      [ "${d##*/}" != all ] || break
      { echo "$off -1"; sed 1d "$d/rules.state"; } > "$d/reset" && mv "$d/reset" "$d/rules.state"
    done
  done
done
)sh";

class GuardRules : public ::testing::TestWithParam<std::string> {
  protected:
    void SetUp() override {
        std::string dir = (fs::temp_directory_path() / "mlt-guard-rules-XXXXXX").string();
        ASSERT_NE(mkdtemp(dir.data()), nullptr);
        dir_ = dir;
    }
    void TearDown() override { fs::remove_all(dir_); }

    // dash (with the system's awk: Debian's mawk), BusyBox's sh with its awk, and a host
    // where every tool the engine runs is BusyBox's.
    test::LocalShell shell() const {
        if (GetParam() != "busybox-only") return test::local_shell(GetParam());
        return test::shell_on_path("busybox-only", "busybox", {"sh"},
                                   {"awk", "cat", "dd", "head", "ls", "mv", "sed", "tail", "tr"});
    }

    // `script` after guard_rules.sh's functions, with `args` as $1...; its output.
    RemoteOutput run(const std::string& script, const std::vector<std::string>& args = {}) {
        test::LocalRemote remote(shell());
        std::string command = "set --";
        for (const std::string& arg : args) command += " " + shell_quote(arg);
        return remote.run(command + "\n" + std::string(scripts::job_guard_rules) + "\n" + script);
    }
    // One tick of the job dir `job` (under the test's dir): "STATUS OUTPUT".
    std::string tick(const std::string& job, const std::string& size = "") {
        const auto out = run("mlt_rules_tick \"$1\" $2; echo \"status $?\"", {path(job), size});
        EXPECT_EQ(out.err, "");
        return out.out;
    }

    std::string path(const std::string& name) const { return dir_ + "/" + name; }
    void write(const std::string& name, const std::string& text, bool append = false) {
        fs::create_directories(fs::path(path(name)).parent_path());
        std::ofstream(path(name), std::ios::binary | (append ? std::ios::app : std::ios::trunc))
            << text;
    }
    std::string read(const std::string& name) const {
        std::ifstream in(path(name), std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        return text.str();
    }

    std::string dir_;
};

// The hits `output` lists (see kFeed); a failed tick fails the test.
std::vector<Hit> hits_of(const std::string& output) {
    std::vector<Hit> out;
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        Hit hit;
        words >> hit.dir >> hit.offset >> std::ws;
        std::getline(words, hit.index, '\t');
        std::getline(words, hit.line);
        EXPECT_NE(line.find('\t'), std::string::npos) << line;
        out.push_back(hit);
    }
    return out;
}

// Job dirs under `top` for `corpus`'s rules: rule-K with rule K alone, match-K with a plateau
// rule K's regex as a regex rule (the host's match on each line), and `all` with every rule.
void arm(const Corpus& corpus, const std::string& top) {
    auto make = [&](const std::string& name, const std::vector<StopRule>& rules) {
        fs::create_directories(top + "/" + name);
        std::ofstream(top + "/" + name + "/rules", std::ios::binary) << host_rules_text(rules);
    };
    std::vector<StopRule> all;
    for (size_t k = 0; k < corpus.rules.size(); ++k) {
        const StopRule& rule = corpus.rules[k].rule;
        all.push_back(rule);
        make("rule-" + std::to_string(k), {rule});
        if (rule.plateau) {
            StopRule matches = rule;
            matches.plateau = false;
            make("match-" + std::to_string(k), {matches});
        }
    }
    make("all", all);
}

// The line (index) that ends at `offset`, or -1.
long line_at(const CorpusLog& log, size_t offset) {
    const std::vector<size_t> ends = log.ends();
    for (size_t i = 0; i < ends.size(); ++i)
        if (ends[i] == offset) return static_cast<long>(i);
    return -1;
}

// What the corpus expects of the job dir `name` on `log`: the lines it fires on.
std::set<size_t> expected_lines(const Corpus& corpus, const CorpusLog& log,
                                const std::string& name) {
    const size_t k = std::stoul(name.substr(name.find('-') + 1));
    if (name.rfind("rule-", 0) == 0) return test::corpus_fires(corpus.rules[k].id, log);
    StopRule matches = corpus.rules[k].rule;
    matches.plateau = false;
    return test::ecmascript_fires(matches, log);
}

// The first rule that fires on `log` with all rules armed: (line, rule index), or (-1, -1).
std::pair<long, long> first_hit(const Corpus& corpus, const CorpusLog& log) {
    for (size_t i = 0; i < log.lines.size(); ++i)
        for (size_t k = 0; k < corpus.rules.size(); ++k)
            if (log.lines[i].fires.count(corpus.rules[k].id))
                return {static_cast<long>(i), static_cast<long>(k)};
    return {-1, -1};
}

void check_hits(const Corpus& corpus, const CorpusLog& log, const std::vector<Hit>& hits,
                const std::vector<std::string>& names) {
    std::map<std::string, std::set<size_t>> found;
    for (const Hit& hit : hits) {
        const long line = line_at(log, hit.offset);
        ASSERT_GE(line, 0) << hit.dir << " reports a hit at offset " << hit.offset
                           << ", where no line ends";
        const auto& expected_line = log.lines[static_cast<size_t>(line)];
        EXPECT_EQ(hit.line, reported(expected_line.text)) << hit.dir;
        if (hit.dir != "all") {
            EXPECT_EQ(hit.index, "0") << hit.dir;
            found[hit.dir].insert(static_cast<size_t>(line));
        }
    }
    for (const std::string& name : names) {
        const std::set<size_t> expected = expected_lines(corpus, log, name);
        for (size_t i : found[name])
            EXPECT_TRUE(expected.count(i))
                << log.name << ": " << name << " fires on corpus line " << log.lines[i].source_line;
        for (size_t i : expected)
            EXPECT_TRUE(found[name].count(i))
                << log.name << ": " << name << " does not fire on corpus line "
                << log.lines[i].source_line;
    }
}

TEST_P(GuardRules, DecidesEveryLineOfTheCorpusAsTheCorpusSays) {
    const Corpus corpus = test::read_corpus();
    for (const CorpusLog& log : corpus.logs) {
        SCOPED_TRACE(log.name);
        const std::string top = path(log.name);
        arm(corpus, top);
        // Three pieces cut mid-line: two for a guard, one for the guard started again.
        const std::string bytes = log.bytes();
        std::vector<std::string> pieces;
        for (size_t k = 0; k < 3; ++k) {
            const size_t from = bytes.size() * k / 3, to = bytes.size() * (k + 1) / 3;
            pieces.push_back(path(log.name + ".piece-" + std::to_string(k)));
            write(log.name + ".piece-" + std::to_string(k), bytes.substr(from, to - from));
        }
        const auto first = run(kFeed, {top, pieces[0], pieces[1]});
        const auto again = run(kFeed, {top, pieces[2]});
        EXPECT_EQ(first.err + again.err, "");
        EXPECT_EQ((first.out + again.out).find("status"), std::string::npos)
            << first.out << again.out;
        const std::vector<Hit> hits = hits_of(first.out + again.out);
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(top))
            if (entry.path().filename() != "all") names.push_back(entry.path().filename());
        check_hits(corpus, log, hits, names);
        // With every rule armed, the first that fires is reported, once.
        std::vector<Hit> all;
        for (const Hit& hit : hits)
            if (hit.dir == "all") all.push_back(hit);
        const auto [line, rule] = first_hit(corpus, log);
        if (line < 0) {
            EXPECT_TRUE(all.empty()) << all.front().line;
            continue;
        }
        ASSERT_EQ(all.size(), 1u);
        EXPECT_EQ(line_at(log, all.front().offset), line);
        EXPECT_EQ(all.front().index, std::to_string(rule));
    }
}

// A tick reads at most 1 MiB of the log and goes on at the next; a line longer than that is
// decided by its first 1 MiB (and reported by its first 500 bytes).
TEST_P(GuardRules, ReadsAtMost1MiBATick) {
    constexpr size_t kMiB = 1 << 20;
    write("a/rules", host_rules_text({test::regex_rule("loss=nan")}));
    std::string lines;
    while (lines.size() < kMiB + 100000)
        lines += "step " + std::to_string(lines.size()) + " loss=0.5\n";
    write("a/console.log", lines + "loss=nan\n");
    EXPECT_EQ(tick("a"), "status 0\n");
    const size_t offset = std::stoul(read("a/rules.state"));
    EXPECT_LE(offset, kMiB);
    EXPECT_GT(offset, kMiB - 30) << "the last complete line of the first MiB";
    EXPECT_EQ(tick("a"), "0\tloss=nan\nstatus 0\n");

    write("b/rules", host_rules_text({test::regex_rule("nan"), test::regex_rule("^x+$")}));
    const std::string giant = "loss=nan " + std::string(kMiB + kMiB / 2, 'x');
    write("b/console.log", giant + "\nx\n");
    EXPECT_EQ(tick("b"), "0\t" + giant.substr(0, 500) + "\nstatus 0\n");
    EXPECT_EQ(read("b/rules.state").substr(0, 11), std::to_string(kMiB) + " 0\nl");

    write("c/rules", host_rules_text({test::regex_rule("nan"), test::regex_rule("y")}));
    write("c/console.log", std::string(kMiB + kMiB / 2, 'x') + "\nnan\n");
    EXPECT_EQ(tick("c"), "status 0\n");
    EXPECT_EQ(read("c/rules.state"), std::to_string(kMiB) + " -1\n\n");
    EXPECT_EQ(tick("c"), "0\tnan\nstatus 0\n") << "the line's rest, then the next line";
}

// No growth, no work: the state stays as it was (not even rewritten), and with the log's size
// given no process runs; a rule fires once, and after a restart of the guard no rule fires
// again; a shorter log is a new one, read from its start, and the plateau counts go on.
TEST_P(GuardRules, DecidesEachByteOnceAndFiresOnce) {
    write("j/rules", host_rules_text({test::regex_rule("nan"), test::plateau_rule("v=(\\d+)", 2)}));
    write("j/console.log", "v=5\nv=6\nv=");
    EXPECT_EQ(tick("j"), "status 0\n");
    const std::string rules = read("j/rules");
    EXPECT_EQ(read("j/rules.state"), "8 -1\n\n1\t5\t" + rules.substr(rules.find("\np\t") + 1));
    struct stat before {};
    ASSERT_EQ(::stat(path("j/rules.state").c_str(), &before), 0);
    EXPECT_EQ(tick("j"), "status 0\n");
    EXPECT_EQ(tick("j", "11"), "status 0\n");
    fs::rename(path("j/console.log"), path("j/moved.log"));
    EXPECT_EQ(run("PATH=/nowhere; mlt_rules_tick \"$1\" 8; echo \"status $?\"", {path("j")}).out,
              "status 0\n")
        << "no process at all";
    fs::rename(path("j/moved.log"), path("j/console.log"));
    struct stat after {};
    ASSERT_EQ(::stat(path("j/rules.state").c_str(), &after), 0);
    EXPECT_EQ(before.st_ino, after.st_ino) << "rewritten without growth";

    write("j/console.log", "7\nv=4\nnan\n", true);
    EXPECT_EQ(tick("j"), "1\tv=7\nstatus 0\n");
    EXPECT_EQ(read("j/rules.state").substr(0, 11), "12 1\nv=7\n2\t");
    EXPECT_EQ(tick("j"), "status 0\n") << "fired once: never again, not even after a restart";

    write("k/rules", host_rules_text({test::plateau_rule("v=(\\d+)", 2)}));
    write("k/console.log", "v=1\nv=2\n");
    EXPECT_EQ(tick("k"), "status 0\n");
    write("k/console.log", "v=3\n");
    EXPECT_EQ(tick("k"), "0\tv=3\nstatus 0\n") << "a new log, and the count went on";
}

// No rules file: nothing to do; one that is none: status 2, and nothing said.
TEST_P(GuardRules, RefusesAFileThatIsNoRulesFile) {
    write("j/console.log", "loss=nan\n");
    EXPECT_EQ(tick("j"), "status 0\n");
    write("j/rules", "rules 2\nr\tnan\n");
    EXPECT_EQ(tick("j"), "status 2\n");
    EXPECT_FALSE(fs::exists(path("j/rules.state")));
}

INSTANTIATE_TEST_SUITE_P(Hosts, GuardRules,
                         ::testing::Values(std::string("dash"), std::string("busybox"),
                                           std::string("busybox-only")),
                         [](const ::testing::TestParamInfo<std::string>& host) {
                             std::string name = host.param;
                             name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
                             return name;
                         });

}  // namespace
}  // namespace mlt
