// The local MLTK's version as a spec load remembers it (the probe of python3 is exercised by
// tests/integration/test_local_mltk_version.cpp, with a python3 of its own).
#include <gtest/gtest.h>

#include "mlt/config/local_mltk.h"

namespace mlt {
namespace {

TEST(LocalMltkVersion, AVersionIsDigitsDotsAndLetters) {
    for (const char* good : {"0.20.0", "1.0rc1", "0.0.0+standin", "2.1.0-dev_3"})
        EXPECT_TRUE(is_mltk_version(good)) << good;
    for (const char* bad : {"", "1.0 ", "1.0\n", "1;rm -rf x", "$(id)", "1.0'", "1/2"})
        EXPECT_FALSE(is_mltk_version(bad)) << bad;
}

TEST(LocalMltkVersion, WhatALoadWithPython3FoundIsTheVersion) {
    remember_local_mltk_version("python3", std::string("0.20.0"));
    EXPECT_EQ(local_mltk_version(), "0.20.0");
    // Another interpreter's MLTK is not the one python3 imports.
    remember_local_mltk_version("/opt/other/python3", std::string("7.7.7"));
    EXPECT_EQ(local_mltk_version(), "0.20.0");
    // Trailing blanks go, as the probe's; what is not a version pins nothing.
    remember_local_mltk_version("python3", std::string("0.19.1\n"));
    EXPECT_EQ(local_mltk_version(), "0.19.1");
    remember_local_mltk_version("python3", std::string("1.0; rm -rf ~"));
    EXPECT_EQ(local_mltk_version(), "");
    remember_local_mltk_version("python3", std::string("0.20.0"));
    remember_local_mltk_version("python3", std::nullopt);  // no MLTK
    EXPECT_EQ(local_mltk_version(), "");
}

}  // namespace
}  // namespace mlt
