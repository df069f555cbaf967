// `mlt ssh -h H forward LOCAL:REMOTE` against the real sshd: a remote `python3 -m
// http.server` on the remote's loopback is fetched from the local port, twice (two forwarded
// connections), and Ctrl+C ends the forward with exit 0.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/net.h"
#include "harness/train_fixture.h"
#include "harness/train_process.h"

namespace mlt_test {
namespace {

constexpr std::chrono::seconds kWait{60};

// The whole answer to `GET /PATH` on 127.0.0.1:PORT ("" when nothing connects).
std::string http_get(int port, const std::string& path) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string answer;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
        const std::string request = "GET /" + path + " HTTP/1.0\r\nHost: x\r\n\r\n";
        if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(request.size())) {
            char buf[4096];
            for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
                answer.append(buf, static_cast<size_t>(n));
        }
    }
    ::close(fd);
    return answer;
}

class ForwardTest : public TrainTest {};

TEST_F(ForwardTest, ARemoteHttpServerIsReachedFromTheLocalPortUntilCtrlC) {
    const std::string served = sshd().dir() + "/served";
    make_dir(served, 0755);
    std::string page;
    for (int i = 0; i < 20000; ++i) page += "line " + std::to_string(i) + "\n";  // ~200 KB
    write_file(served + "/page.txt", page, 0644);
    const int remote_port = find_free_port();
    BackgroundProcess server({"/usr/bin/python3", "-m", "http.server", "--bind", "127.0.0.1",
                              std::to_string(remote_port), "--directory", served},
                             {"PATH=/usr/bin:/bin"}, served);
    ASSERT_TRUE(wait_until([&] { return !http_get(remote_port, "page.txt").empty(); }, kWait))
        << "the http server did not start: " << server.err();
    write_user_settings();

    auto forward = start_mlt({"ssh", "forward", "0:" + std::to_string(remote_port)});
    ASSERT_TRUE(forward->wait_for_output("; Ctrl+C to stop", kWait)) << forward->err();
    const std::string out = forward->out();
    const auto at = out.find("http://127.0.0.1:");
    ASSERT_NE(at, std::string::npos) << out;
    const int local_port = std::stoi(out.substr(at + 17));
    EXPECT_TRUE(has_text(out, "to port " + std::to_string(remote_port) + " on ")) << out;
    for (int round = 0; round < 2; ++round) {
        const std::string answer = http_get(local_port, "page.txt");
        EXPECT_TRUE(has_text(answer, "200 OK")) << answer.substr(0, 200);
        EXPECT_TRUE(answer.size() >= page.size() &&
                    answer.compare(answer.size() - page.size(), page.size(), page) == 0)
            << "round " << round << ": " << answer.size() << " bytes";
    }
    forward->signal(SIGINT);
    const ProcessResult r = forward->wait(kWait);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
}

TEST_F(ForwardTest, PortsThatAreNotLocalColonRemoteAreExit2) {
    write_user_settings();
    const ProcessResult r = mlt({"ssh", "forward", "8888"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(has_text(r.err, "forward 8888: not LOCAL:REMOTE ports")) << describe(r);
}

// `tensorboard MODEL`: a fake tensorboard on the remote PATH (the remote home's .bashrc)
// that serves its --logdir over http; the model's log dir (recorded by its job) is reached
// here, and Ctrl+C stops the remote one (exit 0). Like TensorBoard's own "at http://" line,
// the fake's ("Serving HTTP on ... (http://...)", unbuffered by -u) comes once it listens:
// a line printed before the bind let a loaded machine fetch from a port not yet open.
TEST_F(ForwardTest, TensorboardServesTheModelsLogDirHereAndStopsOnCtrlC) {
    const std::string bin = sshd().dir() + "/fakebin";
    make_dir(bin, 0755);
    write_file(bin + "/tensorboard",
               "#!/bin/sh\n"
               "while [ $# -gt 0 ]; do case $1 in --logdir) d=$2; shift;; --port) p=$2; shift;; "
               "esac; shift; done\n"
               "exec /usr/bin/python3 -u -m http.server --bind 127.0.0.1 --directory \"$d\" "
               "\"$p\"\n",
               0755);
    write_file(sshd().remote_home() + "/.bashrc", "export PATH=\"" + bin + ":$PATH\"\n");
    write_user_settings();
    write_shell_model("tb", "echo events > \"$MLT_LOG_DIR/events.txt\"\n");
    write_model_settings("tb", "ssh:\n  train_cmd: \"sh {spec}\"\n");
    ASSERT_EQ(mlt({"ssh", "train", "tb"}).exit_code, 0);

    const int remote_port = find_free_port();
    auto tb = start_mlt(
        {"ssh", "tensorboard", "tb", "--port", std::to_string(remote_port), "--local-port", "0"});
    ASSERT_TRUE(tb->wait_for_output("; Ctrl+C to stop", kWait)) << tb->err();
    const std::string out = tb->out();
    const auto at = out.find("http://127.0.0.1:");
    ASSERT_NE(at, std::string::npos) << out;
    const std::string answer = http_get(std::stoi(out.substr(at + 17)), "events.txt");
    EXPECT_TRUE(has_text(answer, "200 OK") && has_text(answer, "events\n")) << answer;
    tb->signal(SIGINT);
    const ProcessResult r = tb->wait(kWait);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "stopped tensorboard on ")) << describe(r);
    EXPECT_TRUE(wait_until([&] { return http_get(remote_port, "events.txt").empty(); }, kWait))
        << "the remote tensorboard still serves";
}

// A host without tensorboard: one line that says how to install it, exit 1.
TEST_F(ForwardTest, AHostWithoutTensorboardSaysHowToInstallIt) {
    write_user_settings();
    write_shell_model("tb", "echo trained\n");
    write_model_settings("tb", "ssh:\n  train_cmd: \"sh {spec}\"\n");
    ASSERT_EQ(mlt({"ssh", "train", "tb"}).exit_code, 0);
    const ProcessResult r = mlt({"ssh", "tensorboard", "tb", "--port", "6006"});
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(has_text(r.err, "tensorboard is not installed there")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "pip install tensorboard")) << describe(r);
}

}  // namespace
}  // namespace mlt_test
