// The job's record of its download_files (download_record.h): what a record line may be.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mlt/train/run/download_record.h"

namespace {

const std::string kSha(64, 'a');

TEST(DownloadRecord, EachKindOfRecordLandsInItsPlace) {
    mlt::DownloadRecord r;
    EXPECT_TRUE(mlt::add_download_record("r 6b0b-42", r, 2));
    EXPECT_TRUE(mlt::add_download_record("f " + kSha + " out/a b.txt", r, 2));
    EXPECT_TRUE(mlt::add_download_record("x 0 /home/u/results dir", r, 2));
    EXPECT_TRUE(mlt::add_download_record("x 1 one.txt", r, 2));
    EXPECT_TRUE(mlt::add_download_record("p 0 " + kSha + " sub/x.txt", r, 2));
    EXPECT_TRUE(mlt::add_download_record("p 1 " + kSha + " ", r, 2));
    EXPECT_EQ(r.run_id, "6b0b-42");
    EXPECT_EQ(r.globs.at("out/a b.txt"), kSha);
    EXPECT_EQ(r.pair_paths.at(0), "/home/u/results dir");
    EXPECT_EQ(r.pairs.at(0).at("sub/x.txt"), kSha);
    EXPECT_EQ(r.pairs.at(1).at(""), kSha);  // a file pair's one file
}

TEST(DownloadRecord, WhatNoJobWritesIsRefused) {
    mlt::DownloadRecord r;
    for (const std::string& bad : std::vector<std::string>{
             "", "q something", "f " + kSha, "f " + kSha + " ../escape", "f " + kSha + " /abs",
             "f " + std::string(64, 'A') + " upper.txt", "f " + std::string(63, 'a') + " short",
             "f " + kSha + " a/./b", "f " + kSha + " ctl\x1b[2Jx", "x one path", "x -1 path",
             "x 1234567 path", "x 2 beyond the pairs", "p 2 " + kSha + " beyond",
             "p 0 " + kSha + " ../up", "p 0 nothex x", "p x " + kSha + " y"})
        EXPECT_FALSE(mlt::add_download_record(bad, r, 2)) << "accepted '" << bad << "'";
    EXPECT_TRUE(r.globs.empty());
    EXPECT_TRUE(r.pairs.empty());
    EXPECT_TRUE(r.pair_paths.empty());
}

}  // namespace
