// The connection options and -v after COMMAND and after MODEL, in a real run against sshd.
#include <gtest/gtest.h>

#include <string>

#include "harness/expect.h"
#include "harness/ssh_test.h"

namespace mlt_test {
namespace {

using OptionsAnywhereTest = SshTest;

TEST_F(OptionsAnywhereTest, StatusTakesThemAfterModel) {
    make_finished_job("my_model", 0);
    trust_server_in(custom_known_hosts());
    const ProcessResult r = env().run_mlt({"ssh", "status", "my_model", "-h", host_with_dir(), "-i",
                                           sshd().client_key_path(), "-o",
                                           "UserKnownHostsFile=" + custom_known_hosts(), "-v"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "my_model")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "mlt: debug:")) << describe(r);
    EXPECT_TRUE(logged_in());
}

}  // namespace
}  // namespace mlt_test
