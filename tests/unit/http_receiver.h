#pragma once
// A webhook receiver for the notification tests: an HTTP/1.1 server on 127.0.0.1 (a free port)
// run by one thread, which records each request (method, path, headers, body) and answers it:
// `failure` (500, or a 302 to /elsewhere) to the first `failures` requests (to test retries),
// none at all to the first `silent` ones before those (to test a try's timeout: the connection
// stays open until the client gives up), 200 after. One request per connection (it answers
// `Connection: close`). It stops and joins its thread when destroyed.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace mlt::test {

struct HttpRequest {
    std::string method;
    std::string path;
    std::map<std::string, std::string> headers;  // names in lower case
    std::string body;
    int answered = 0;  // the status it got; 0: none (a silent one)
};

class HttpReceiver {
  public:
    explicit HttpReceiver(int failures = 0, int silent = 0, int failure = 500)
        : failures_(failures), silent_(silent), failure_(failure) {
        listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t size = sizeof addr;
        if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), size) != 0 ||
            ::listen(listener_, 16) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &size) != 0)
            throw std::runtime_error("the test's HTTP receiver cannot listen on 127.0.0.1");
        port_ = ntohs(addr.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~HttpReceiver() {
        stop_ = true;
        thread_.join();
        for (int fd : held_) ::close(fd);
        ::close(listener_);
    }
    HttpReceiver(const HttpReceiver&) = delete;
    HttpReceiver& operator=(const HttpReceiver&) = delete;

    // http://127.0.0.1:PORT + path (which starts with '/').
    std::string url(const std::string& path) const {
        return "http://127.0.0.1:" + std::to_string(port_) + path;
    }
    std::vector<HttpRequest> requests() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return requests_;
    }
    size_t count() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return requests_.size();
    }

  private:
    void serve() {
        while (!stop_) {
            pollfd p{listener_, POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0) continue;
            const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd >= 0) handle(fd);
        }
    }

    // Reads up to `want` bytes more into `data` (or up to "\r\n\r\n" when want is 0); false
    // once the peer closed, 10 s passed or the receiver stops.
    bool read_more(int fd, std::string& data, size_t want) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        char buf[4096];
        while (!stop_ && std::chrono::steady_clock::now() < deadline) {
            if (want == 0 ? data.find("\r\n\r\n") != std::string::npos : data.size() >= want)
                return true;
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0) continue;
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n <= 0) return false;
            data.append(buf, static_cast<size_t>(n));
        }
        return false;
    }

    static std::string lower(std::string s) {
        for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return s;
    }

    // The request line and headers of `head` (up to the blank line) into `r`.
    static void parse_head(const std::string& head, HttpRequest& r) {
        size_t at = head.find("\r\n");
        const std::string line = head.substr(0, at);
        const size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
        r.method = line.substr(0, sp1);
        r.path = line.substr(sp1 + 1, sp2 - sp1 - 1);
        while (at != std::string::npos && at + 2 < head.size()) {
            const size_t end = head.find("\r\n", at + 2);
            const std::string h = head.substr(at + 2, end - at - 2);
            const size_t colon = h.find(':');
            if (colon != std::string::npos) {
                const size_t value = h.find_first_not_of(' ', colon + 1);
                r.headers[lower(h.substr(0, colon))] =
                    value == std::string::npos ? "" : h.substr(value);
            }
            at = end;
        }
    }

    static void write_all(int fd, const std::string& text) {
        size_t done = 0;
        while (done < text.size()) {
            const ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
            if (n <= 0) return;
            done += static_cast<size_t>(n);
        }
    }

    void handle(int fd) {
        std::string data;
        if (!read_more(fd, data, 0)) {
            ::close(fd);
            return;
        }
        const size_t head_end = data.find("\r\n\r\n");
        HttpRequest r;
        parse_head(data.substr(0, head_end + 2), r);
        std::string body = data.substr(head_end + 4);
        const size_t length =
            r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
        if (lower(r.headers["expect"]) == "100-continue" && body.size() < length)
            write_all(fd, "HTTP/1.1 100 Continue\r\n\r\n");
        read_more(fd, body, length);
        r.body = body.substr(0, std::min(body.size(), length));
        size_t seen;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            seen = requests_.size();
            r.answered = seen < static_cast<size_t>(silent_)               ? 0
                         : seen < static_cast<size_t>(silent_ + failures_) ? failure_
                                                                           : 200;
            requests_.push_back(r);
        }
        if (r.answered == 0) {
            held_.push_back(fd);  // no answer: the client's timeout ends it
            return;
        }
        const std::string status = r.answered == 200   ? " OK"
                                   : r.answered == 302 ? " Found\r\nLocation: /elsewhere"
                                                       : " Internal Server Error";
        write_all(fd, "HTTP/1.1 " + std::to_string(r.answered) + status +
                          "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        ::close(fd);
    }

    const int failures_;
    const int silent_;
    const int failure_;
    int listener_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    mutable std::mutex mutex_;
    std::vector<HttpRequest> requests_;
    std::vector<int> held_;  // only the thread touches it until the join
    std::thread thread_;
};

}  // namespace mlt::test
