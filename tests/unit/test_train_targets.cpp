#include <gtest/gtest.h>

#include "mlt/commands/targets.h"
#include "mlt/util/error.h"

namespace {

mlt::SshSettings settings_with_connection() {
    mlt::SshSettings s;
    mlt::ConnectionSettings c;
    c.hostname = "from-settings";
    c.port = 2200;
    c.username = "alice";
    c.key_filename = "~/.ssh/id_settings";
    s.connections.push_back(c);
    s.remote_dir = "~/ws";
    s.host_key_checking = mlt::HostKeyChecking::yes;
    return s;
}

TEST(Targets, SettingsAloneGiveTheHost) {
    auto t = mlt::resolve_targets({}, settings_with_connection());
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0].connect.host, "from-settings");
    EXPECT_EQ(t[0].connect.port, 0);  // left for the ssh config, then the fallback
    EXPECT_EQ(t[0].connect.fallback_port, 2200);
    EXPECT_EQ(t[0].connect.fallback_user, "alice");
    EXPECT_EQ(t[0].connect.fallback_identity_file, "~/.ssh/id_settings");
    EXPECT_EQ(t[0].remote_dir, "~/ws");
    EXPECT_EQ(t[0].connect.host_key_checking, std::nullopt);  // left for the ssh config
    EXPECT_EQ(t[0].connect.fallback_host_key_checking, mlt::HostKeyChecking::yes);
}

TEST(Targets, CommandLineWins) {
    mlt::SshCommandLine cli;
    cli.hosts = {"bob@cli-host:2222/data/run"};
    cli.port = 3333;  // -p wins over the host's own :port (MLTK's order)
    cli.identity_file = "/k";
    cli.ssh_options = {"StrictHostKeyChecking=accept-new", "UserKnownHostsFile /kh",
                       "ConnectTimeout=7"};
    auto t = mlt::resolve_targets(cli, settings_with_connection());
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0].connect.host, "cli-host");
    EXPECT_EQ(t[0].connect.user, "bob");
    EXPECT_EQ(t[0].connect.port, 3333);
    EXPECT_EQ(t[0].connect.identity_file, "/k");
    EXPECT_EQ(t[0].remote_dir, "data/run");  // MLTK: relative to the login dir
    EXPECT_EQ(t[0].connect.host_key_checking, mlt::HostKeyChecking::accept_new);
    EXPECT_EQ(t[0].connect.known_hosts_path, "/kh");
    EXPECT_EQ(t[0].connect.connect_timeout_s, 7);
}

// As ssh: of -o ProxyJump and -o ProxyCommand, the first one given wins.
TEST(Targets, FirstProxyOptionWins) {
    mlt::SshCommandLine cli;
    cli.hosts = {"gpu"};
    cli.ssh_options = {"proxyjump=jump1,jump2", "ProxyCommand=nc %h %p", "ProxyJump=other"};
    auto t = mlt::resolve_targets(cli, settings_with_connection());
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0].connect.proxy_keyword, "ProxyJump");
    EXPECT_EQ(t[0].connect.proxy_value, "jump1,jump2");
    cli.ssh_options = {"ProxyCommand nc %h %p", "ProxyJump=other"};
    t = mlt::resolve_targets(cli, settings_with_connection());
    EXPECT_EQ(t[0].connect.proxy_keyword, "ProxyCommand");
    EXPECT_EQ(t[0].connect.proxy_value, "nc %h %p");
}

// A connection entry without a hostname is skipped; the hosts after it keep their own entry's
// user, key and password (they once took the skipped entry's, and sent its password along).
TEST(Targets, AnEntryWithoutHostnameDoesNotShiftTheSecrets) {
    mlt::SshSettings s;
    mlt::ConnectionSettings blank;
    blank.username = "blank-user";
    blank.password = "blank-secret";
    mlt::ConnectionSettings gpu;
    gpu.hostname = "gpu";
    gpu.username = "gpu-user";
    gpu.password = "gpu-secret";
    gpu.key_filename = "~/.ssh/id_gpu";
    s.connections = {blank, gpu};
    auto t = mlt::resolve_targets({}, s);
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0].connect.host, "gpu");
    EXPECT_EQ(t[0].connect.fallback_user, "gpu-user");
    EXPECT_EQ(t[0].connect.password, "gpu-secret");
    EXPECT_EQ(t[0].connect.fallback_identity_file, "~/.ssh/id_gpu");
}

// transfer.min_rate and transfer.stall_seconds reach every connection as its data floor.
TEST(Targets, TheTransferFloorGoesWithTheConnection) {
    mlt::SshSettings s = settings_with_connection();
    s.transfer_min_rate = 1234;
    s.transfer_stall_seconds = 7;
    mlt::SshCommandLine cli;
    cli.hosts = {"a", "b"};
    for (const auto& t : mlt::resolve_targets(cli, s)) {
        EXPECT_EQ(t.connect.data_floor.min_rate, 1234u);
        EXPECT_EQ(t.connect.data_floor.stall_seconds, 7.0);
    }
    const auto defaults = mlt::resolve_targets(cli, mlt::SshSettings{});
    EXPECT_EQ(defaults.at(0).connect.data_floor.min_rate, 65536u);
    EXPECT_EQ(defaults.at(0).connect.data_floor.stall_seconds, 30.0);
}

TEST(Targets, ConnectionKeysOfTheSettings) {
    mlt::SshSettings s = settings_with_connection();
    s.connections[0].password = "pw";
    s.connections[0].passphrase = "pp";
    s.connections[0].timeout_s = 9;
    s.connections[0].look_for_keys = false;
    s.connections[0].allow_agent = false;
    auto t = mlt::resolve_targets({}, s);
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0].connect.host_origin, "from ssh.connection.hostname");
    EXPECT_EQ(t[0].connect.password, "pw");
    EXPECT_EQ(t[0].connect.passphrase, "pp");
    EXPECT_EQ(t[0].connect.connect_timeout_s, std::nullopt);  // left for -o, the ssh config
    EXPECT_EQ(t[0].connect.fallback_connect_timeout_s, 9);
    EXPECT_FALSE(t[0].connect.look_for_keys);
    EXPECT_FALSE(t[0].connect.allow_agent);

    // --password and -o ConnectTimeout win; unset booleans mean true.
    mlt::SshCommandLine cli;
    cli.hosts = {"h"};
    cli.password = "from-cli";
    cli.ssh_options = {"ConnectTimeout=3"};
    s.connections[0].look_for_keys.reset();
    s.connections[0].allow_agent.reset();
    t = mlt::resolve_targets(cli, s);
    EXPECT_EQ(t[0].connect.host_origin, "from -h");
    EXPECT_EQ(t[0].connect.password, "from-cli");
    EXPECT_EQ(t[0].connect.connect_timeout_s, 3);
    EXPECT_TRUE(t[0].connect.look_for_keys);
    EXPECT_TRUE(t[0].connect.allow_agent);
}

TEST(Targets, DashPBeatsTheHostPort) {
    mlt::SshCommandLine cli;
    cli.hosts = {"a", "b:23"};
    cli.port = 3333;
    auto t = mlt::resolve_targets(cli, {});
    ASSERT_EQ(t.size(), 2u);
    EXPECT_EQ(t[0].connect.port, 3333);
    EXPECT_EQ(t[1].connect.port, 3333);
    EXPECT_EQ(t[0].remote_dir, ".");

    cli.port = 0;  // without -p, the host's :port
    t = mlt::resolve_targets(cli, {});
    EXPECT_EQ(t[0].connect.port, 0);
    EXPECT_EQ(t[1].connect.port, 23);
}

TEST(Targets, ErrorsAreUsageErrors) {
    auto expect_usage = [](const mlt::SshCommandLine& cli) {
        try {
            mlt::resolve_targets(cli, {});
            ADD_FAILURE() << "no error";
        } catch (const mlt::Error& e) {
            EXPECT_EQ(e.code(), mlt::exit_code::kUsage) << e.what();
        }
    };
    expect_usage({});  // no host at all
    mlt::SshCommandLine cli;
    cli.hosts = {"h"};
    cli.ssh_options = {"ForwardAgent=yes"};
    expect_usage(cli);
    cli.ssh_options = {"StrictHostKeyChecking=ask"};
    expect_usage(cli);
    cli.ssh_options = {"ConnectTimeout=soon"};
    expect_usage(cli);
    cli.ssh_options = {};
    cli.ssh_config = "/nonexistent/ssh_config";
    expect_usage(cli);
}

TEST(Targets, NodeHostsOfTheSettingsAreTheNodes) {
    mlt::SshSettings s = settings_with_connection();  // one entry: it serves every node
    s.node_hosts = {"root@10.0.0.5:22/work", "10.0.0.6"};
    auto t = mlt::resolve_targets({}, s);
    ASSERT_EQ(t.size(), 2u);
    EXPECT_EQ(t[0].connect.host, "10.0.0.5");
    EXPECT_EQ(t[0].connect.user, "root");
    EXPECT_EQ(t[0].connect.port, 22);
    EXPECT_EQ(t[0].remote_dir, "work");  // relative to the login dir, as with -h
    EXPECT_EQ(t[0].connect.host_origin, "from nodes.hosts");
    EXPECT_EQ(t[1].connect.host, "10.0.0.6");
    EXPECT_EQ(t[1].remote_dir, "~/ws");
    EXPECT_EQ(t[1].connect.fallback_user, "alice");
    EXPECT_EQ(t[1].connect.fallback_identity_file, "~/.ssh/id_settings");

    mlt::SshCommandLine cli;  // -h beats nodes.hosts
    cli.hosts = {"cli-host"};
    t = mlt::resolve_targets(cli, s);
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0].connect.host, "cli-host");
}

TEST(Targets, EachNodeTakesTheConnectionEntryAtItsIndex) {
    mlt::SshSettings s = settings_with_connection();
    mlt::ConnectionSettings second;
    second.username = "bob";
    second.password = "second-pw";
    s.connections.push_back(second);
    s.node_hosts = {"a", "b", "c"};
    auto t = mlt::resolve_targets({}, s);
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(t[0].connect.fallback_user, "alice");
    EXPECT_EQ(t[1].connect.fallback_user, "bob");
    EXPECT_EQ(t[1].connect.password, "second-pw");
    EXPECT_EQ(t[2].connect.fallback_user, "");  // no entry of its own, none borrowed
    EXPECT_EQ(t[2].connect.password, std::nullopt);
}

TEST(Targets, ABadNodeHostNamesTheSetting) {
    mlt::SshSettings s;
    s.node_hosts = {"ok", "bad:port"};
    try {
        mlt::resolve_targets({}, s);
        ADD_FAILURE() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.code(), mlt::exit_code::kUsage);
        EXPECT_NE(std::string(e.what()).find("nodes.hosts: invalid host 'bad:port'"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace
