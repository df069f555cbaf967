#include <gtest/gtest.h>

#include "mlt/ssh/session.h"

namespace {

TEST(KnownHostsRemovalCommand, OpenSshFormsReadyToPaste) {
    const std::string def = "/home/u/.ssh/known_hosts";
    EXPECT_EQ(mlt::known_hosts_removal_command("gpu.example.com", def, def),
              "ssh-keygen -R gpu.example.com");
    EXPECT_EQ(mlt::known_hosts_removal_command("[ssh4.vast.ai]:35023", def, def),
              "ssh-keygen -R '[ssh4.vast.ai]:35023'");
    EXPECT_EQ(mlt::known_hosts_removal_command("[::1]:2222", "/tmp/kh", def),
              "ssh-keygen -R '[::1]:2222' -f /tmp/kh");
    EXPECT_EQ(mlt::known_hosts_removal_command("h", "/tmp/my hosts", def),
              "ssh-keygen -R h -f '/tmp/my hosts'");
}

}  // namespace
