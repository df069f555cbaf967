// run_child (include/mlt/util/process.h): argv without a shell, lines out, and a time bound
// that holds whatever the child does with its output.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "mlt/util/error.h"
#include "mlt/util/process.h"
#include "wait_until.h"

namespace mlt {
namespace {

using namespace std::chrono_literals;

struct Outcome {
    ChildResult result;
    std::vector<std::string> lines;
};

Outcome run_it(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
    Outcome r;
    r.result = run_child(argv, timeout, [&](const std::string& line) { r.lines.push_back(line); });
    return r;
}

// Whether `pid` has ended: gone, or a zombie no one reaps (as under a container's init).
bool ended(long pid) {
    if (::kill(static_cast<pid_t>(pid), 0) != 0) return errno == ESRCH;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pid_field, comm, state;
    stat >> pid_field >> comm >> state;
    return !stat || state == "Z";
}

TEST(RunChild, HandsOverLinesAndTheExitStatus) {
    // The arguments reach the program as they are: no shell reads them.
    Outcome r = run_it({"sh", "-c", "printf '%s\\n' \"$1\"; printf 'no newline'; exit 3", "sh",
                        "a b; $(echo x) 'c'"},
                       30s);
    ASSERT_TRUE(r.result.started);
    EXPECT_FALSE(r.result.timed_out);
    EXPECT_EQ(r.result.exit_code, 3);
    EXPECT_EQ(r.lines, (std::vector<std::string>{"a b; $(echo x) 'c'", "no newline"}));
}

TEST(RunChild, AProgramThatCannotStartSaysWhy) {
    Outcome r = run_it({"/nonexistent/mlt-no-such-program"}, 30s);
    EXPECT_FALSE(r.result.started);
    EXPECT_EQ(r.result.start_errno, ENOENT);
}

// notify_cmd's input: a file as the child's stdin; a file that is not there is an io error.
TEST(RunChild, WithInputTheChildReadsTheFileOnStdin) {
    const std::string path = ::testing::TempDir() + "mlt-run-child-input";
    std::ofstream(path) << "{\"a\": 1}\nsecond\n";
    std::vector<std::string> lines;
    const ChildResult r =
        run_child_with_input(path, {"sh", "-c", "cat; echo end"}, 30s,
                             [&](const std::string& line) { lines.push_back(line); });
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(lines, (std::vector<std::string>{"{\"a\": 1}", "second", "end"}));
    std::remove(path.c_str());
    EXPECT_THROW(run_child_with_input(path, {"cat"}, 30s, [](const std::string&) {}), Error);
}

TEST(RunChild, AChildThatClosesItsOutputAndKeepsRunningIsStoppedAtTheBound) {
    // Its output ends at once, the child does not: the bound still holds.
    Outcome r = run_it({"sh", "-c", "exec >/dev/null 2>&1; sleep 20"}, 300ms);
    ASSERT_TRUE(r.result.started);
    EXPECT_TRUE(r.result.timed_out);
    EXPECT_EQ(r.result.exit_code, 128 + SIGKILL);
}

TEST(RunChild, AChildThatHangsWritingNothingIsStoppedAtTheBound) {
    Outcome r = run_it({"sh", "-c", "echo started; sleep 20"}, 300ms);
    EXPECT_TRUE(r.result.timed_out);
    EXPECT_EQ(r.lines, (std::vector<std::string>{"started"}));
}

TEST(RunChild, AStopSetByAnotherThreadEndsTheChildLikeTheBoundWithoutCountingAsIt) {
    std::atomic<bool> stop{false};
    std::vector<std::string> lines;
    std::thread setter;
    const ChildResult r = run_child(
        {"sh", "-c", "echo started; sleep 20"}, 60s,
        [&](const std::string& line) {
            lines.push_back(line);
            setter = std::thread([&stop] { stop = true; });  // once the child runs
        },
        &stop);
    setter.join();
    EXPECT_TRUE(r.started);
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.exit_code, 128 + SIGKILL);
    EXPECT_EQ(lines, (std::vector<std::string>{"started"}));
}

TEST(RunChild, WhatTheChildLeftRunningDoesNotHoldTheResultAndIsStopped) {
    // The child ends at once; a process it started in the background holds its output open.
    Outcome r = run_it({"sh", "-c", "sleep 20 & echo \"$!\"; echo done"}, 15s);
    ASSERT_TRUE(r.result.started);
    EXPECT_FALSE(r.result.timed_out);
    EXPECT_EQ(r.result.exit_code, 0);
    ASSERT_EQ(r.lines.size(), 2u);
    EXPECT_EQ(r.lines[1], "done");
    // It was in the child's process group, which is stopped with the child.
    const long pid = std::strtol(r.lines[0].c_str(), nullptr, 10);
    EXPECT_TRUE(test::wait_until([&] { return ended(pid); })) << r.lines[0];
}

}  // namespace
}  // namespace mlt
