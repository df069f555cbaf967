#pragma once
// A Reporter that keeps what a run showed: the console bytes, and the alert, notice and warning
// lines.
#include <string>
#include <string_view>

#include "mlt/util/reporter.h"

namespace mlt::test {

class CapturingReporter : public Reporter {
  public:
    void emit(Event event, std::string_view text) override {
        if (event == Event::console) console.append(text);
        if (event == Event::alert) alerts += std::string(text) + "\n";
        if (event == Event::notice) notices += std::string(text) + "\n";
        if (event == Event::warning) warnings += std::string(text) + "\n";
    }
    std::string console, alerts, notices, warnings;
};

}  // namespace mlt::test
