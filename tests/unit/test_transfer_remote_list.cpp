// The parsing of remote listings, fed canned `find` output (tests/fuzz/ fuzzes the same code).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mlt/transfer/transfer.h"
#include "mlt/util/error.h"

namespace mlt {
namespace {

// A Remote whose every command prints `out` and exits 0.
class CannedRemote : public Remote {
  public:
    explicit CannedRemote(std::string out) : out_(std::move(out)) {}
    const std::string& name() const override { return name_; }
    RemoteOutput run(const std::string&, std::string_view) override { return {0, out_, ""}; }
    // The output in pieces of 7 bytes, so that records arrive split.
    int stream(const std::string&, const InputSource&, const OutputSink& on_stdout,
               const OutputSink&) override {
        for (size_t at = 0; at < out_.size(); at += 7)
            on_stdout(std::string_view(out_).substr(at, 7));
        return 0;
    }

  private:
    std::string name_ = "u@h:22";
    std::string out_;
};

// The infos of a listing made of `records` ("<r|u> <size> <mtime> <ctime> <inode> <path>").
std::vector<RemoteFileInfo> infos_of(const std::vector<std::string>& records) {
    std::string listing;
    for (const auto& r : records) listing += r + '\0';
    CannedRemote remote(listing);
    return list_remote_file_info(remote, "w");
}

TEST(TransferRemoteList, ParsesSizesMtimesAndNames) {
    auto infos = infos_of({"r 5 1700000000.25 1700000001.5 42 ./b c", "u 0 -2.5 -2.5 7 ./a"});
    ASSERT_EQ(infos.size(), 2u);
    EXPECT_EQ(infos[0].path, "a");
    EXPECT_EQ(infos[0].size, 0u);
    EXPECT_EQ(infos[0].mtime_ns, -1500000000);
    EXPECT_FALSE(infos[0].readable);
    EXPECT_EQ(infos[0].inode, 7u);
    EXPECT_EQ(infos[1].path, "b c");
    EXPECT_EQ(infos[1].size, 5u);
    EXPECT_EQ(infos[1].mtime_ns, 1700000000250000000);
    EXPECT_EQ(infos[1].ctime_ns, 1700000001500000000);
    EXPECT_TRUE(infos[1].readable);
}

// Found by the remote_list fuzz target: a clock record without nanoseconds (`date` lacking
// %N) and with a huge second count overflowed int64_t (undefined behaviour).
TEST(TransferRemoteList, AHugeClockIsUnexpectedOutput) {
    CannedRemote coarse(std::string("@1700000000.N", 13) + '\0' + "r 1 1.0 1.0 1 ./a" + '\0');
    int64_t clock_ns = 0;
    EXPECT_EQ(list_remote_file_info(coarse, "w", &clock_ns).size(), 1u);
    EXPECT_EQ(clock_ns, 1700000000000000000);
    CannedRemote huge(std::string("@179543945439457.63 1 ./a") + '\0');
    try {
        list_remote_file_info(huge, "w", &clock_ns);
        ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("gave unexpected output"), std::string::npos)
            << e.what();
    }
}

// Found by the remote_list fuzz target: a size of 20 digits wrapped around silently.
TEST(TransferRemoteList, AnAbsurdSizeIsUnexpectedOutput) {
    EXPECT_EQ(infos_of({"r 999999999999999999 1.0 1.0 1 ./big"})[0].size, 999999999999999999u);
    try {
        infos_of({"r 18446744073709551617 1.0 1.0 1 ./a"});
        ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("gave unexpected output"), std::string::npos)
            << e.what();
    }
}

// Found by the remote_list fuzz target: the nanoseconds of a huge mtime overflowed int64_t
// (undefined behaviour) and came out as some other time instead of a refused listing.
TEST(TransferRemoteList, AnMtimeBeyondTheYear2262IsUnexpectedOutput) {
    EXPECT_EQ(infos_of({"r 1 9223372035.999999999 1.0 1 ./last"})[0].mtime_ns, 9223372035999999999);
    for (const char* mtime : {"9223372036.0", "99999999999999999999.5", "-9223372036.5"}) {
        SCOPED_TRACE(mtime);
        try {
            infos_of({std::string("r 3 ") + mtime + " 1.0 1 ./a"});
            ADD_FAILURE() << "accepted";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("gave unexpected output"), std::string::npos)
                << e.what();
        }
    }
}

// Every name of a listing goes through the gate: one that climbs out, or a name listed twice,
// is tampering, whatever else the listing holds.
TEST(TransferRemoteList, NamesThatLeaveTheBaseAreTampering) {
    for (const char* bad : {"./../../../.bashrc", "../../../../victim.txt", "./a/../../x", "/etc/x",
                            "./a\x1b]52;c;cHduZWQ=\x07", "./a//b"}) {
        try {
            infos_of({"r 5 1.0 1.0 1 ./fine", std::string("r 40000000 1.0 1.0 2 ") + bad});
            ADD_FAILURE() << bad << ": no throw";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::tampered) << bad << ": " << e.what();
            EXPECT_NE(std::string(e.what()).find("the listing of w on u@h:22 looks tampered with"),
                      std::string::npos)
                << e.what();
        }
        CannedRemote plain(std::string("./fine") + '\0' + bad + '\0');
        EXPECT_THROW(list_remote_files(plain, "w"), Error) << bad;
    }
    try {
        infos_of({"r 5 1.0 1.0 1 ./twice", "r 6 1.0 1.0 2 twice"});
        ADD_FAILURE() << "a name listed twice passed";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::tampered) << e.what();
    }
}

// A listing is read record by record: a record longer than any name is refused before it is
// held whole, and stat_remote_files keeps only the files it asked about.
TEST(TransferRemoteList, RecordsAreBoundedAndStatKeepsOnlyWhatWasAsked) {
    CannedRemote endless(std::string(20000, 'n'));
    EXPECT_THROW(list_remote_files(endless, "w"), Error);
    std::string listing =
        std::string("r 1 1.0 1.0 1 ./asked") + '\0' + "r 2 1.0 1.0 2 ./other" + '\0';
    CannedRemote stat(listing);
    const auto infos = stat_remote_files(stat, "w", {"asked"});
    ASSERT_EQ(infos.size(), 1u);
    EXPECT_EQ(infos[0].path, "asked");
}

}  // namespace
}  // namespace mlt
