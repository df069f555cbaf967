// ProxyCommand tokens and the ProxyJump command as OpenSSH builds them; the size of a channel
// read.
#include <gtest/gtest.h>

#include <string>

#include "mlt/util/error.h"
#include "ssh/channel_io.h"
#include "ssh/proxy.h"

namespace {

using mlt::ssh_detail::expand_proxy_tokens;
using mlt::ssh_detail::libssh_proxy_command;
using mlt::ssh_detail::proxy_jump_command;
using mlt::ssh_detail::ProxyTokens;

const ProxyTokens kTarget{"gpu.example.com", 2222, "ubuntu", "gpu_box"};

TEST(SshProxy, TokensAsSshExpandsThem) {
    EXPECT_EQ(expand_proxy_tokens("nc %h %p # %r %n 100%%", kTarget, "ProxyCommand at f:1"),
              "nc gpu.example.com 2222 # ubuntu gpu_box 100%");
}

TEST(SshProxy, UnknownTokenOrUnsafeValueIsAConfigError) {
    for (const char* command : {"nc %h %C", "nc %h %"}) {
        try {
            expand_proxy_tokens(command, kTarget, "ProxyCommand at f:3");
            ADD_FAILURE() << "no error for " << command;
        } catch (const mlt::Error& e) {
            EXPECT_EQ(e.code(), mlt::exit_code::kUsage);
            EXPECT_NE(std::string(e.what()).find("ProxyCommand at f:3"), std::string::npos);
        }
    }
    ProxyTokens evil = kTarget;
    evil.user = "x;rm -rf ~";
    EXPECT_THROW(expand_proxy_tokens("ssh -l %r jump", evil, "o"), mlt::Error);
    EXPECT_NO_THROW(expand_proxy_tokens("ssh jump", evil, "o")) << "%r not used";
}

// OpenSSH's parse_jump: the last hop is logged in to, the earlier ones are its -J.
TEST(SshProxy, JumpCommandAsSshBuildsIt) {
    std::string jump;
    EXPECT_EQ(proxy_jump_command("a,alice@b:2200", "ProxyJump at f:1", kTarget, "/cfg", &jump),
              "ssh -F /cfg -l alice -p 2200 -J a -W '[gpu.example.com]:2222' b");
    EXPECT_EQ(jump, "alice@b:2200");
    EXPECT_EQ(proxy_jump_command("ssh://j", "o", kTarget, "", &jump),
              "ssh -W '[gpu.example.com]:2222' j");
    EXPECT_THROW(proxy_jump_command("bad host", "o", kTarget, "", &jump), mlt::Error);
    EXPECT_THROW(proxy_jump_command("j/dir", "o", kTarget, "", &jump), mlt::Error);
}

TEST(SshProxy, LibsshCommandKeepsPercentAndCapturesStderr) {
    EXPECT_EQ(libssh_proxy_command("printf 100%", ""), "printf 100%%");
    EXPECT_EQ(libssh_proxy_command("ssh -W x j", "/tmp/e%1"),
              "exec /bin/sh -c 'exec ssh -W x j 2>>/tmp/e%%1'");
    EXPECT_EQ(libssh_proxy_command("ssh -W x j", "/tmp/a b"),
              "exec /bin/sh -c 'exec ssh -W x j 2>>'\\''/tmp/a b'\\'''");
}

}  // namespace

// The read size (and so the window libssh keeps open) follows the link's round trip.
TEST(SshReadSize, IsTheRoundTripTimesTheRateBetweenTwoAndSixteenMiB) {
    using mlt::ssh_detail::kMinReadChunk;
    using mlt::ssh_detail::kReadChunk;
    mlt::ssh_detail::Liveness live;
    EXPECT_EQ(mlt::ssh_detail::read_size(live), kReadChunk);  // not known yet
    live.fastest_reply_s = 0.0002;                            // loopback
    EXPECT_EQ(mlt::ssh_detail::read_size(live), kMinReadChunk);
    live.fastest_reply_s = 0.020;
    EXPECT_EQ(mlt::ssh_detail::read_size(live), 8000000u);
    live.fastest_reply_s = 0.100;
    EXPECT_EQ(mlt::ssh_detail::read_size(live), kReadChunk);
}
