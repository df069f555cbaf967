#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mlt/config/host_spec.h"
#include "mlt/util/error.h"

namespace mlt {
namespace {

struct GoodCase {
    std::string text;
    std::string user;
    std::string host;
    int port;
    std::string remote_dir;
    std::string canonical;  // to_string of the parsed spec
};

TEST(HostSpec, ParsesValidSpecs) {
    const std::vector<GoodCase> cases = {
        {"gpu", "", "gpu", 0, "", "gpu"},
        {"root@gpu", "root", "gpu", 0, "", "root@gpu"},
        {"gpu:2222", "", "gpu", 2222, "", "gpu:2222"},
        {"root@10.0.0.5:22/~/ws", "root", "10.0.0.5", 22, "~/ws", "root@10.0.0.5:22/~/ws"},
        {"h/ws", "", "h", 0, "ws", "h/ws"},
        {"h//abs", "", "h", 0, "/abs", "h//abs"},
        {"h:1/a/b/c", "", "h", 1, "a/b/c", "h:1/a/b/c"},
        {"h:65535", "", "h", 65535, "", "h:65535"},
        {"h:022", "", "h", 22, "", "h:22"},
        {"[::1]", "", "::1", 0, "", "[::1]"},
        {"[::1]:2222", "", "::1", 2222, "", "[::1]:2222"},
        {"user@[fe80::1]:22/work", "user", "fe80::1", 22, "work", "user@[fe80::1]:22/work"},
        {"a@b@host", "a@b", "host", 0, "", "a@b@host"},
        {"h/dir:with@signs", "", "h", 0, "dir:with@signs", "h/dir:with@signs"},
        {"ubuntu@192.168.1.56/workspace", "ubuntu", "192.168.1.56", 0, "workspace",
         "ubuntu@192.168.1.56/workspace"},
        {"vast-box", "", "vast-box", 0, "", "vast-box"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.text);
        HostSpec spec = parse_host_spec(c.text);
        EXPECT_EQ(spec.user, c.user);
        EXPECT_EQ(spec.host, c.host);
        EXPECT_EQ(spec.port, c.port);
        EXPECT_EQ(spec.remote_dir, c.remote_dir);
        EXPECT_EQ(to_string(spec), c.canonical);
        // The canonical text parses back to the same spec.
        HostSpec again = parse_host_spec(to_string(spec));
        EXPECT_EQ(again.user, spec.user);
        EXPECT_EQ(again.host, spec.host);
        EXPECT_EQ(again.port, spec.port);
        EXPECT_EQ(again.remote_dir, spec.remote_dir);
    }
}

struct BadCase {
    std::string text;
    std::string problem;  // a substring of the message
};

TEST(HostSpec, RejectsInvalidSpecsNamingTheValue) {
    const std::vector<BadCase> cases = {
        {"", "empty host"},
        {"@h", "empty user"},
        {"u@", "empty host name"},
        {":22", "empty host name"},
        {"h:", "empty port"},
        {"h:0", "not in 1..65535"},
        {"h:65536", "not in 1..65535"},
        {"h:99999999999999999999", "not in 1..65535"},
        {"h:ssh", "not a number"},
        {"h:-1", "not a number"},
        {"h:+22", "not a number"},
        {"h:22x", "not a number"},
        {"[::1", "without a closing"},
        {"::1]", "unbalanced brackets"},
        {"h]", "unbalanced brackets"},
        {"[::1]x", "unexpected text after ']'"},
        {"[::1]:", "empty port"},
        {"[]", "empty host name"},
        {"[[::1]]", "nested"},
        {"::1", "more than one ':'"},
        {"h:1:2", "more than one ':'"},
        {"my host", "whitespace"},
        {" h", "whitespace"},
        {"h\t", "whitespace"},
        {std::string("h\x01", 2), "control character"},
        {"h\x7f", "control character"},
        {"h/", "nothing after '/'"},
        {"-oProxyCommand=x", "may not start with '-'"},
        {"-u@h", "may not start with '-'"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.text);
        try {
            parse_host_spec(c.text);
            ADD_FAILURE() << "accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::usage);
            EXPECT_EQ(e.code(), exit_code::kUsage);
            std::string what = e.what();
            EXPECT_NE(what.find(c.problem), std::string::npos) << what;
            if (!c.text.empty()) {
                EXPECT_NE(what.find("'" + c.text + "'"), std::string::npos) << what;
            }
            EXPECT_FALSE(e.hint().empty());
        }
    }
}

}  // namespace
}  // namespace mlt

namespace mlt {
namespace {

TEST(HostNameProblem, AcceptsHostNamesAndAddresses) {
    for (const char* name : {"gpu", "gpu-1.example.com", "example.com.", "127.0.0.1", "::1",
                             "fe80::1", "2001:db8::2", "1234", "a"}) {
        EXPECT_EQ(host_name_problem(name), std::nullopt) << name;
    }
    EXPECT_EQ(host_name_problem(std::string(63, 'a') + ".com"), std::nullopt);
}

TEST(HostNameProblem, SaysWhatIsWrong) {
    const struct {
        std::string name;
        std::string problem;
    } cases[] = {
        {"", "empty"},
        {"vast_ai", "'_'"},
        {"utest_host", "'_'"},
        {"a..b", "empty label"},
        {".a", "empty label"},
        {"-a.com", "starts or ends with '-'"},
        {"a-.com", "starts or ends with '-'"},
        {std::string(64, 'a') + ".com", "longer than 63"},
        {std::string(250, 'a').replace(60, 1, ".").replace(120, 1, ".").replace(180, 1, ".") +
             ".example",
         "longer than 253"},
        {"h:22", "':'"},
        {"h!", "'!'"},
        {"h ost", "blank"},
        {"h\xc3\xa9", "non-ASCII"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        auto problem = host_name_problem(c.name);
        ASSERT_TRUE(problem.has_value());
        EXPECT_NE(problem->find(c.problem), std::string::npos) << *problem;
    }
}

}  // namespace
}  // namespace mlt
