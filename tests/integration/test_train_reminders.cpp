// MLTK's reminders: after a train the remote machine may still be billing (MLTK prints it
// after every `mltk ssh`), unless shutdown_cmds powered it off; a failure's hint names the
// verbose log.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

using TrainRemindersTest = TrainTest;

const char* const kReminder = "may still be billing: stop or destroy it when you are done";

TEST_F(TrainRemindersTest, ATrainEndsWithTheBillingReminder) {
    write_shell_model("m", "echo trained\n");
    write_model_settings("m",
                         "ssh:\n  train_cmd: \"sh {spec}\"\n  shutdown_cmds: [\"echo bye\"]\n");
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "m"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, kReminder)) << describe(r);
    // A failed training too.
    write_shell_model("m", "exit 7\n");
    r = mlt({"ssh", "train", "m"});
    ASSERT_EQ(r.exit_code, 7) << describe(r);
    EXPECT_TRUE(has_text(r.out, kReminder)) << describe(r);
}

// shutdown_cmds that power the host off (here a stand-in `shutdown` on the remote PATH): no
// machine is left to bill.
TEST_F(TrainRemindersTest, ShutdownCmdsThatPowerOffLeaveNoReminder) {
    const std::string bin = sshd().dir() + "/fakebin";
    std::filesystem::create_directories(bin);
    write_file(bin + "/shutdown", "#!/bin/sh\necho \"powering off ($*)\"\n", 0755);
    write_shell_model("m", "echo trained\n");
    write_model_settings("m", "ssh:\n  train_cmd: \"sh {spec}\"\n  environment: {PATH: \"" + bin +
                                  ":$PATH\"}\n  shutdown_cmds: [\"sudo=x shutdown -h now\"]\n");
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "m"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "powering off (-h now)")) << describe(r);
    EXPECT_FALSE(has_text(r.out, kReminder)) << describe(r);
}

// A failure that is more than a bad input: the hint names the verbose log; the machine may
// still bill.
TEST_F(TrainRemindersTest, AFailuresHintNamesTheVerboseLog) {
    write_shell_model("m", "echo trained\n");
    write_model_settings("m", "ssh:\n  train_cmd: \"sh {spec}\"\n");
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "m", "--resume"});
    ASSERT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(has_text(r.err, "details: " + env().home() + "/.mltk/cli_logs/mlt.log)"))
        << describe(r);
    EXPECT_TRUE(has_text(r.out, kReminder)) << describe(r);
}

}  // namespace
}  // namespace mlt_test
