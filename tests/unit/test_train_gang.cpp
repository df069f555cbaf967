// Gang: the barrier of a multi-node run opens once every node arrived or passed, and at once
// for all when one fails; the first failure is kept.
#include <gtest/gtest.h>

#include <thread>

#include "mlt/train/gang.h"

namespace mlt {
namespace {

TEST(Gang, TheBarrierOpensOnceEveryNodeArrived) {
    Gang gang(3);
    EXPECT_FALSE(gang.arrive(0, 0.01).has_value());  // the others are not there yet
    gang.passed(2);                                  // a resumed node that needs no barrier
    std::optional<bool> one;
    std::thread t([&] { one = gang.arrive(1, 30); });
    t.join();
    ASSERT_TRUE(one.has_value());
    EXPECT_TRUE(*one);
    EXPECT_EQ(gang.arrive(0, 0.01), std::optional<bool>(true));
    EXPECT_FALSE(gang.stopping());
}

TEST(Gang, AFailureOpensTheBarrierWithFalseAndTheFirstOneIsKept) {
    Gang gang(2);
    std::optional<bool> zero;
    std::thread t([&] { zero = gang.arrive(0, 30); });
    gang.fail(1, "h1", 3);
    t.join();
    ASSERT_TRUE(zero.has_value());
    EXPECT_FALSE(*zero);
    gang.fail(0, "h0", 143);  // stopped because of rank 1: not the root cause
    EXPECT_TRUE(gang.stopping());
    ASSERT_TRUE(gang.first_failure().has_value());
    EXPECT_EQ(gang.first_failure()->rank, 1);
    EXPECT_EQ(gang.first_failure()->host, "h1");
    EXPECT_EQ(gang.first_failure()->exit_code, 3);
}

}  // namespace
}  // namespace mlt
