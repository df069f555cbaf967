// Pure pieces of the train command: which shutdown_cmds power the host off (then mlt does not
// remind the user that the machine may still be billing).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mlt/train/run/run_summary.h"

namespace {

TEST(PowersHostOff, TheCommandWordDecides) {
    using V = std::vector<std::string>;
    for (const auto& cmds :
         {V{"shutdown -h now"}, V{"sudo shutdown now"}, V{"sync; /sbin/poweroff"},
          V{"echo bye", "sudo halt"}, V{"systemctl poweroff"}, V{"vastai stop instance 123"},
          V{"cd x && vastai destroy instance $ID"}, V{"LANG=C sudo shutdown"}})
        EXPECT_TRUE(mlt::powers_host_off(cmds)) << cmds.back();
    for (const auto& cmds :
         {V{}, V{"echo shutdown -h now"}, V{"rm -rf cache"}, V{"systemctl status"},
          V{"vastai show instances"}, V{"./shutdown_notes.sh"}, V{"cat halt.txt"}})
        EXPECT_FALSE(mlt::powers_host_off(cmds)) << (cmds.empty() ? "(none)" : cmds.back());
}

}  // namespace
