// `mlt ssh doctor`'s judgement: doctor.sh's output read into facts, and each fact of the host
// and of the link made an ok, warn or FAIL line; doctor.sh itself under dash and BusyBox.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "mlt/commands/doctor.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"
#include "remote_scripts.h"
#include "sh_check.h"
#include "transfer_fixtures.h"

namespace mlt {
namespace {

// What doctor.sh prints on a healthy GPU host (the GPU lines as nvidia-smi prints them).
const char* const kHealthy =
    "home\t/root\n"
    "shell\t/bin/bash\n"
    "startup\t/root/.bashrc\n"
    "tool\tsh\t/usr/bin/sh\n"
    "tool\ttar\t/usr/bin/tar\n"
    "tool\tsha256sum\t/usr/bin/sha256sum\n"
    "tool\tflock\t/usr/bin/flock\n"
    "tool\tawk\t/usr/bin/awk\n"
    "tool\tsetsid\t/usr/bin/setsid\n"
    "tool\tpython3\t/usr/bin/python3\n"
    "tool\tcurl\t/usr/bin/curl\n"
    "tool\twget\t\n"
    "tool\tnvidia-smi\t/usr/bin/nvidia-smi\n"
    "python\t0\t3.11.2\n"
    "gpu_status\t0\n"
    "gpu\tNVIDIA H200, 143771, 550.54.15\n"
    "gpu\tNVIDIA H200, 143771, 550.54.15\n"
    "cuda\t12.4\n"
    "disk_dir\t/workspace\t/workspace\n"
    "disk\t1048576000\t524288000\n"
    "writable\tyes\n";

DoctorNeeds needs() {
    DoctorNeeds n;
    n.remote_dir = "/workspace";
    n.venv = true;
    n.auto_connections = 2;
    n.auto_most = 8;
    return n;
}

// The check named `what` (an empty FAIL one when there is none, so that the test fails).
DoctorCheck find(const std::vector<DoctorCheck>& checks, const std::string& what) {
    for (const DoctorCheck& c : checks)
        if (c.what == what) return c;
    ADD_FAILURE() << "no check " << what;
    return {CheckLevel::fail, what, "", ""};
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// `kHealthy` with the line starting with `key` replaced by `line` (dropped when empty).
std::string healthy_but(const std::string& key, const std::string& line) {
    std::string out;
    for (const std::string& l : split(kHealthy, '\n'))
        if (!l.empty()) out += l.rfind(key, 0) == 0 ? (line.empty() ? "" : line + "\n") : l + "\n";
    return out;
}

// Where the host has flock, train uses it; without it train still runs: a warning.
TEST(Doctor, AMissingFlockIsAWarning) {
    const HostFacts host = parse_doctor_facts(healthy_but("tool\tflock", "tool\tflock\t"));
    const std::vector<DoctorCheck> checks = judge_host(host, needs());
    const DoctorCheck flock = find(checks, "flock");
    EXPECT_EQ(flock.level, CheckLevel::warn) << format_check(flock);
    EXPECT_TRUE(has(flock.fix, "util-linux")) << flock.fix;
    EXPECT_EQ(doctor_exit_code(checks), 0);
}

TEST(Doctor, AHealthyHostPassesEveryCheck) {
    const HostFacts host = parse_doctor_facts(kHealthy);
    const std::vector<DoctorCheck> checks = judge_host(host, needs());
    for (const char* tool : {"sh", "tar", "sha256sum", "flock", "awk", "setsid", "python3"})
        EXPECT_EQ(find(checks, tool).level, CheckLevel::ok) << format_check(find(checks, tool));
    EXPECT_EQ(find(checks, "curl or wget").level, CheckLevel::ok);
    EXPECT_EQ(find(checks, "disk").level, CheckLevel::ok) << format_check(find(checks, "disk"));
    EXPECT_EQ(doctor_exit_code(checks), 0);
    EXPECT_TRUE(has(doctor_summary(checks, "u@h:22"), "has what a train needs"));
}

TEST(Doctor, GpusWithDriverAndCudaVersion) {
    const DoctorCheck gpu = find(judge_host(parse_doctor_facts(kHealthy), needs()), "GPU");
    EXPECT_EQ(gpu.level, CheckLevel::ok);
    EXPECT_TRUE(has(gpu.found, "driver 550.54.15, CUDA 12.4; 2 GPUs")) << gpu.found;
    EXPECT_TRUE(has(gpu.found, "1: NVIDIA H200 (140.4 GiB)")) << gpu.found;
}

TEST(Doctor, NoGpuIsAWarningNotAFailure) {
    const HostFacts host =
        parse_doctor_facts(healthy_but("tool\tnvidia-smi", "tool\tnvidia-smi\t"));
    HostFacts without = host;
    without.gpu_status.reset();  // doctor.sh runs no nvidia-smi where there is none
    without.gpu_rows.clear();
    const std::vector<DoctorCheck> checks = judge_host(without, needs());
    EXPECT_EQ(find(checks, "GPU").level, CheckLevel::warn);
    EXPECT_TRUE(has(find(checks, "GPU").found, "no GPU found"));
    EXPECT_EQ(doctor_exit_code(checks), 0);
}

TEST(Doctor, AFailingNvidiaSmiIsAWarningWithItsWords) {
    HostFacts host = parse_doctor_facts(kHealthy);
    host.gpu_status = 9;
    host.gpu_rows = {
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."};
    const DoctorCheck gpu = find(judge_host(host, needs()), "GPU");
    EXPECT_EQ(gpu.level, CheckLevel::warn);
    EXPECT_TRUE(has(gpu.found, "(exit 9): NVIDIA-SMI has failed")) << gpu.found;
}

// A hostile host's words (a GPU name that writes the clipboard, a path with a newline) are
// shown escaped: one line each, nothing the terminal acts on.
TEST(Doctor, WhatTheHostSaysIsShownEscaped) {
    std::string facts = healthy_but("tool\ttar", "tool\ttar\t/usr/bin/tar\rFAKE");
    const std::string gpu = "gpu\tNVIDIA H200";
    facts.replace(facts.find(gpu), gpu.size(), "gpu\tNVIDIA \x1b]52;c;cm0gLXJmIH4=\x07H200");
    const HostFacts host = parse_doctor_facts(facts);
    for (const DoctorCheck& check : judge_host(host, needs())) {
        const std::string line = format_check(check);
        EXPECT_EQ(line.find_first_of("\x1b\x07\r\n"), std::string::npos) << line;
    }
    EXPECT_TRUE(has(format_check(find(judge_host(host, needs()), "GPU")), "\\x1b]52"));
    EXPECT_TRUE(has(format_check(find(judge_host(host, needs()), "tar")), "tar\\rFAKE"));
}

TEST(Doctor, AMissingRequiredToolFailsNamingIt) {
    const HostFacts host = parse_doctor_facts(healthy_but("tool\tsha256sum", "tool\tsha256sum\t"));
    const std::vector<DoctorCheck> checks = judge_host(host, needs());
    const DoctorCheck sum = find(checks, "sha256sum");
    EXPECT_EQ(sum.level, CheckLevel::fail);
    EXPECT_TRUE(has(format_check(sum), "FAIL  sha256sum: not found")) << format_check(sum);
    EXPECT_TRUE(has(sum.fix, "coreutils")) << sum.fix;
    EXPECT_EQ(doctor_exit_code(checks), 1);
    EXPECT_TRUE(has(doctor_summary(checks, "u@h:22"), "1 check FAILED"));
    // A tool the host does not list at all counts as missing too.
    const HostFacts silent = parse_doctor_facts(healthy_but("tool\ttar", ""));
    EXPECT_EQ(find(judge_host(silent, needs()), "tar").level, CheckLevel::fail);
}

TEST(Doctor, PythonAndItsVenvAreNeededOnlyWithCreateVenv) {
    const HostFacts no_venv = parse_doctor_facts(healthy_but("python", "python\t1\t3.11.2"));
    EXPECT_EQ(find(judge_host(no_venv, needs()), "python3").level, CheckLevel::fail);
    EXPECT_TRUE(has(find(judge_host(no_venv, needs()), "python3").fix, "python3-venv"));
    DoctorNeeds own_script = needs();
    own_script.venv = false;
    EXPECT_EQ(find(judge_host(no_venv, own_script), "python3").level, CheckLevel::ok);
    const HostFacts no_python =
        parse_doctor_facts(healthy_but("python", "")
                               .replace(healthy_but("python", "").find("/usr/bin/python3"),
                                        std::string("/usr/bin/python3").size(), ""));
    EXPECT_EQ(find(judge_host(no_python, needs()), "python3").level, CheckLevel::fail);
    EXPECT_EQ(find(judge_host(no_python, own_script), "python3").level, CheckLevel::warn);
}

TEST(Doctor, PythonOnALoginShellsPathOnlyCounts) {
    const HostFacts host = parse_doctor_facts(healthy_but("tool\tpython3", "tool\tpython3\t") +
                                              "login_python\t/root/.pyenv/shims/python3\n");
    const DoctorCheck python = find(judge_host(host, needs()), "python3");
    EXPECT_EQ(python.level, CheckLevel::ok) << format_check(python);
    EXPECT_TRUE(has(python.found, "/root/.pyenv/shims/python3 (on a login shell's PATH only"))
        << python.found;
}

TEST(Doctor, NeitherCurlNorWgetIsAWarning) {
    const HostFacts host = parse_doctor_facts(healthy_but("tool\tcurl", "tool\tcurl\t"));
    const std::vector<DoctorCheck> checks = judge_host(host, needs());
    EXPECT_EQ(find(checks, "curl or wget").level, CheckLevel::warn);
    EXPECT_EQ(doctor_exit_code(checks), 0);
}

TEST(Doctor, DiskFullOrReadOnlyFailsLowWarns) {
    const auto disk = [](const std::string& out) {
        return find(judge_host(parse_doctor_facts(out), needs()), "disk");
    };
    EXPECT_EQ(disk(healthy_but("writable", "writable\tno")).level, CheckLevel::fail);
    const DoctorCheck full = disk(healthy_but("disk\t", "disk\t1024\t0"));
    EXPECT_EQ(full.level, CheckLevel::fail);
    EXPECT_TRUE(has(full.found, "(full)")) << full.found;
    EXPECT_EQ(disk(healthy_but("disk\t", "disk\t1048576000\t5000000")).level, CheckLevel::fail);
    EXPECT_EQ(disk(healthy_but("disk\t", "disk\t104857600\t5242880")).level, CheckLevel::warn);
    EXPECT_EQ(disk(healthy_but("disk\t", "")).level, CheckLevel::warn);
    const DoctorCheck missing =
        disk(healthy_but("disk_dir", "disk_dir\t/\t/") + "disk\t1048576000\t524288000\n");
    EXPECT_TRUE(has(missing.found, "does not exist yet")) << missing.found;
}

LinkFacts healthy_link() {
    LinkFacts link;
    link.login = {"known", "ssh-ed25519", "SHA256:abc", "/home/u/.ssh/known_hosts",
                  "publickey (/home/u/.ssh/id_ed25519)"};
    link.round_trip_s = 0.02;
    link.command_s = 0.05;
    link.clock_offset_s = 0.2;
    link.channels = link.channels_tried = 10;
    link.second_connection = true;
    link.probe_bytes = link.down_bytes = 16 * 1024 * 1024;
    link.up_s = link.down_s = 0.5;
    return link;
}

TEST(Doctor, ASlowLoginShellWarnsNamingItsStartupFile) {
    const HostFacts host = parse_doctor_facts(kHealthy);
    LinkFacts link = healthy_link();
    EXPECT_EQ(find(judge_login(link, host), "login shell").level, CheckLevel::ok);
    EXPECT_EQ(find(judge_login(link, host), "channels").level, CheckLevel::ok);
    link.command_s = 0.6;
    const DoctorCheck shell = find(judge_login(link, host), "login shell");
    EXPECT_EQ(shell.level, CheckLevel::warn);
    EXPECT_TRUE(has(shell.found, "0.56 s per command")) << shell.found;
    EXPECT_TRUE(has(shell.found, "in ~/.bashrc")) << shell.found;
    // Then each channel of a big transfer pays it, unless the channel listener takes them.
    const DoctorCheck slow = find(judge_login(link, host), "channels");
    EXPECT_EQ(slow.level, CheckLevel::warn);
    EXPECT_TRUE(has(slow.found, "logs in (0.56 s)")) << slow.found;
    EXPECT_TRUE(has(slow.fix, "python3")) << slow.fix;
    link.listener = true;
    const DoctorCheck listening = find(judge_login(link, host), "channels");
    EXPECT_EQ(listening.level, CheckLevel::ok);
    EXPECT_TRUE(has(listening.found, "without a login")) << listening.found;
    link.listener = false;
    EXPECT_EQ(find(judge_login(link, parse_doctor_facts(healthy_but("startup", ""))), "login shell")
                  .level,
              CheckLevel::warn);
}

TEST(Doctor, HostKeyAndLogin) {
    LinkFacts link = healthy_link();
    const HostFacts host = parse_doctor_facts(kHealthy);
    EXPECT_TRUE(
        has(format_check(find(judge_login(link, host), "host key")), "ok    host key: known"));
    link.login.host_key = "recorded";
    EXPECT_TRUE(has(find(judge_login(link, host), "host key").found, "learned now"));
    link.login.host_key = "changed";
    EXPECT_EQ(find(judge_login(link, host), "host key").level, CheckLevel::warn);
    EXPECT_TRUE(has(find(judge_login(link, host), "login").found, "publickey ("));
}

TEST(Doctor, LinkChecks) {
    LinkFacts link = healthy_link();
    DoctorNeeds n = needs();
    std::vector<DoctorCheck> checks = judge_link(link, n);
    for (const DoctorCheck& c : checks) EXPECT_EQ(c.level, CheckLevel::ok) << format_check(c);
    EXPECT_TRUE(has(find(checks, "connections").found, "start with 2 and grow to up to 8"));
    EXPECT_TRUE(has(find(checks, "throughput").found, "(33.6 MB/s)"))
        << find(checks, "throughput").found;

    link.clock_offset_s = -12;
    EXPECT_EQ(find(judge_link(link, n), "clock").level, CheckLevel::warn);
    EXPECT_TRUE(has(find(judge_link(link, n), "clock").found, "12.0 s behind"));
    link.second_connection = false;
    link.second_refusal = "cannot connect to 127.0.0.1 port 22: Connection refused";
    const DoctorCheck one = find(judge_link(link, n), "connections");
    EXPECT_EQ(one.level, CheckLevel::warn);
    EXPECT_TRUE(has(one.found, "transfers use this one connection")) << one.found;
    link = healthy_link();
    link.channels = 3;
    EXPECT_EQ(find(judge_link(link, n), "connections").level, CheckLevel::warn);
    link = healthy_link();
    link.down_bytes = 100;
    EXPECT_EQ(find(judge_link(link, n), "throughput").level, CheckLevel::warn);
}

TEST(Doctor, UnknownAndBrokenLinesAreSkipped) {
    const HostFacts host =
        parse_doctor_facts("some profile noise\nnew_key\tx\ndisk\tnot-a-number\t1\npython\t\n");
    EXPECT_FALSE(host.disk_free_kib);
    EXPECT_FALSE(host.python_status);
    EXPECT_TRUE(host.tools.empty());
}

// doctor.sh itself, as mlt sends it, under each small shell: its facts read back.
TEST(Doctor, TheScriptReportsUnderDashAndBusybox) {
    test::TempDir dir;
    const std::string missing = dir.path() + "/not/yet";
    for (const auto& shell : sh_check::shells()) {
        const sh_check::Run r =
            sh_check::run_script(shell, shell_assignment("mlt_dir", shell_quote_path(missing)) +
                                            std::string(scripts::commands_doctor));
        ASSERT_EQ(r.status, 0) << r.output;
        const HostFacts host = parse_doctor_facts(r.output);
        EXPECT_FALSE(host.shell.empty()) << r.output;
        EXPECT_EQ(host.disk_dir, dir.path()) << r.output;
        EXPECT_EQ(host.writable, true) << r.output;
        EXPECT_TRUE(host.disk_free_kib) << r.output;
        ASSERT_GE(host.tools.size(), 10u) << r.output;
        EXPECT_EQ(host.tools.front().first, "sh");
        EXPECT_FALSE(host.tools.front().second.empty()) << r.output;
        EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "the probe file was not removed";
    }
}

// doctor.sh's GPU lines from an nvidia-smi that prints what a real one prints (a stand-in
// first on PATH: this machine may have no GPU).
TEST(Doctor, TheScriptReadsNvidiaSmi) {
    test::TempDir dir;
    const std::string smi = dir.path() + "/nvidia-smi";
    test::write_file(
        smi,
        "#!/bin/sh\n"
        "if [ $# -gt 0 ]; then printf 'NVIDIA H200, 143771, 550.54.15\\nNVIDIA H200, 143771, "
        "550.54.15\\n'; exit 0; fi\n"
        "echo '+-----------------------------------------------------------------------------+'\n"
        "echo '| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4     |'\n");
    std::filesystem::permissions(smi, std::filesystem::perms::owner_all);
    for (const auto& shell : sh_check::shells()) {
        const sh_check::Run r = sh_check::run_script(
            shell, shell_assignment("PATH", shell_quote(dir.path()) + ":\"$PATH\"") +
                       shell_assignment("mlt_dir", shell_quote(dir.path())) +
                       std::string(scripts::commands_doctor));
        ASSERT_EQ(r.status, 0) << r.output;
        const DoctorCheck gpu = find(judge_host(parse_doctor_facts(r.output), needs()), "GPU");
        EXPECT_EQ(gpu.level, CheckLevel::ok) << r.output;
        EXPECT_TRUE(
            has(gpu.found, "driver 550.54.15, CUDA 12.4; 2 GPUs: 0: NVIDIA H200 (140.4 GiB)"))
            << gpu.found;
    }
}

}  // namespace
}  // namespace mlt
