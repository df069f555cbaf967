#pragma once
// A marketplace's CLI run once per call (provider.h): its stdout read apart from its stderr
// (warnings there never spoil the JSON), bounded in time, without a shell.

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mlt/provider/provider.h"
#include "mlt/util/error.h"

namespace mlt {

class CliProvider : public Provider {
  protected:
    CliProvider(std::string program, std::chrono::milliseconds timeout)
        : program_(std::move(program)), timeout_(timeout) {}

    struct Output {
        int exit_code = 0;
        std::string out;               // stdout, whole (bounded)
        std::vector<std::string> err;  // stderr's lines (bounded)
    };
    // Runs the CLI with `args`, `input` on its stdin. Throws mlt::Error (config) when it
    // cannot be started (not installed), or did not end in time.
    Output run(const std::vector<std::string>& args, const std::string& input = {}) const;
    // Runs it and reads its stdout as JSON; an error it printed (on either stream), an exit
    // status other than 0 or output that is no JSON throws mlt::Error (config) naming `what`.
    nlohmann::json read_json(const std::vector<std::string>& args, const std::string& what) const;
    // Runs it and expects `line` on stdout; else throws as read_json does.
    void expect_line(const std::vector<std::string>& args, const std::string& input,
                     const std::string& line, const std::string& what) const;
    Error odd_output(const std::string& what, const std::string& detail) const;
    static int parse_port(const nlohmann::json& v);
    static void sort_by_price(std::vector<Offer>& offers);

    [[noreturn]] void throw_failed(const std::string& what, const Output& o) const {
        throw failed(what, o);
    }

  private:
    Error failed(const std::string& what, const Output& o) const;
    std::string program_;
    std::chrono::milliseconds timeout_;
};

std::unique_ptr<Provider> make_vast_cli(std::chrono::milliseconds timeout);
std::unique_ptr<Provider> make_runpod_cli(std::chrono::milliseconds timeout);

}  // namespace mlt
