#pragma once
// A Remote for the fuzz targets: every command "prints" the bytes of the current input.

#include <string>
#include <string_view>

#include "mlt/ssh/remote.h"

namespace mlt_fuzz {

class FakeRemote : public mlt::Remote {
  public:
    explicit FakeRemote(std::string_view output) : output_(output) {}

    const std::string& name() const override { return name_; }

    mlt::RemoteOutput run(const std::string&, std::string_view) override {
        mlt::RemoteOutput out;
        out.exit_status = 0;
        out.out = std::string(output_);
        return out;
    }

    // Sends the output in chunks of `chunk` bytes, as a channel does; the input is ignored.
    int stream(const std::string&, const mlt::InputSource&, const mlt::OutputSink& on_stdout,
               const mlt::OutputSink&) override {
        for (size_t at = 0; at < output_.size(); at += kChunk)
            on_stdout(output_.substr(at, kChunk));
        return 0;
    }

  private:
    static constexpr size_t kChunk = 4096;
    std::string name_ = "fuzz@remote:22";
    std::string_view output_;
};

}  // namespace mlt_fuzz
