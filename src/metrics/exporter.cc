// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "metrics/exporter.h"

#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <deque>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "httplib.h"

namespace kairos::internal {
namespace {

constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// httplib's queue of accepted connections: `threads` threads, and at most `max_queued`
// connections waiting for one. enqueue (on httplib's accept thread) waits for room, so a
// flood of connections waits in the kernel's listen backlog instead of in memory.
class BoundedPool final : public httplib::TaskQueue {
 public:
  BoundedPool(int threads, int max_queued) : max_queued_(static_cast<size_t>(max_queued)) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
  }
  ~BoundedPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &BoundedPool::HasRoom));
    jobs_.push_back(std::move(fn));
  }

  // Runs the queued jobs (each closes its connection; once the server stopped they end at
  // once) and joins the threads. Called by the accept thread when the server stops.
  void shutdown() override {
    {
      absl::MutexLock lock(&mu_);
      if (shutdown_) return;
      shutdown_ = true;
    }
    for (std::thread& t : threads_) t.join();
  }

 private:
  bool HasRoom() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return jobs_.size() < max_queued_; }
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !jobs_.empty() || shutdown_; }

  void Work() {
    pthread_setname_np(pthread_self(), "kairos-metrics");
    // httplib writes with send(2) without MSG_NOSIGNAL: a scraper that closes its connection
    // early would raise SIGPIPE, whose default action ends the whole process. The signal
    // goes to the thread that wrote, so blocking it here makes that write fail with EPIPE.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    for (;;) {
      std::function<void()> job;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(this, &BoundedPool::HasWork));
        if (jobs_.empty()) return;  // shut down, nothing left
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  const size_t max_queued_;
  absl::Mutex mu_;
  std::deque<std::function<void()>> jobs_ ABSL_GUARDED_BY(mu_);
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

std::string JoinHostPort(const std::string& host, int port) {
  return host.find(':') != std::string::npos ? absl::StrCat("[", host, "]:", port)
                                             : absl::StrCat(host, ":", port);
}

}  // namespace

absl::StatusOr<HostPort> ParseHostPort(std::string_view address, std::string_view what) {
  const auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s '%s' is not HOST:PORT (e.g. 127.0.0.1:9100, [::1]:9100): %s", what, address, why));
  };
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return bad("no ':PORT'");
  std::string_view host = address.substr(0, colon);
  const std::string_view port_text = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return bad("an IPv6 address goes in brackets");
  }
  if (host.empty()) return bad("no HOST");
  int port = 0;
  if (port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string_view::npos ||
      !absl::SimpleAtoi(std::string(port_text), &port) || port > 65535) {
    return bad("PORT must be a number from 0 to 65535");
  }
  return HostPort{std::string(host), port};
}

struct MetricsExporter::Impl {
  httplib::Server server;
  std::thread listener;
  // Set by httplib's accept thread once it is running (it then makes its task queue):
  // from then on server.stop() ends it.
  absl::Notification listening;
  absl::Mutex mu;
  bool stopped ABSL_GUARDED_BY(mu) = false;
};

MetricsExporter::MetricsExporter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetricsExporter::~MetricsExporter() { Stop(); }

absl::StatusOr<std::unique_ptr<MetricsExporter>> MetricsExporter::Start(std::string_view address,
                                                                        Render render,
                                                                        ExporterOptions options) {
  absl::StatusOr<HostPort> where = ParseHostPort(address, "metrics_listen");
  if (!where.ok()) return where.status();
  if (options.threads < 1 || options.max_queued_connections < 1 ||
      options.io_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "metrics exporter: threads, max_queued_connections and io_timeout must be positive");
  }
  // httplib::Server's constructor sets SIGPIPE to SIG_IGN for the whole process; the
  // program's own choice is put back (the exporter's threads block SIGPIPE themselves).
  struct sigaction previous = {};
  ::sigaction(SIGPIPE, nullptr, &previous);
  auto impl = std::make_unique<Impl>();
  ::sigaction(SIGPIPE, &previous, nullptr);
  httplib::Server& server = impl->server;
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a second node would
  // bind the same port without an error and take half of the scrapes.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  const int64_t timeout_us = absl::ToInt64Microseconds(options.io_timeout);
  server.set_read_timeout(timeout_us / 1000000, timeout_us % 1000000);
  server.set_write_timeout(timeout_us / 1000000, timeout_us % 1000000);
  // The wait for a request's first byte has whole seconds.
  server.set_keep_alive_timeout(std::max<time_t>(
      1, static_cast<time_t>(std::ceil(absl::ToDoubleSeconds(options.io_timeout)))));
  server.set_keep_alive_max_count(1);  // one request per connection: a thread is never idle
  server.set_payload_max_length(4096);
  const int threads = options.threads;
  const int max_queued = options.max_queued_connections;
  Impl* raw = impl.get();
  server.new_task_queue = [raw, threads, max_queued]() -> httplib::TaskQueue* {
    raw->listening.Notify();
    return new BoundedPool(threads, max_queued);
  };
  server.Get("/metrics",
             [render = std::move(render)](const httplib::Request&, httplib::Response& res) {
               res.set_content(render(), kContentType);
             });
  server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.status == 404) {
      res.set_content("404 not found: this server serves GET /metrics only\n",
                      "text/plain; charset=utf-8");
    }
  });

  {
    // A host that does not resolve, said as such (httplib only reports failure).
    addrinfo hints = {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* found = nullptr;
    if (const int error = ::getaddrinfo(where->host.c_str(), nullptr, &hints, &found); error != 0) {
      return absl::UnavailableError(absl::StrFormat("metrics: cannot listen on %s: host '%s': %s",
                                                    address, where->host, ::gai_strerror(error)));
    }
    ::freeaddrinfo(found);
  }
  errno = 0;
  int port = where->port;
  bool bound = false;
  if (port == 0) {
    port = server.bind_to_any_port(where->host);
    bound = port > 0;
  } else {
    bound = server.bind_to_port(where->host, port);
  }
  if (!bound) {
    const int error = errno;
    return absl::UnavailableError(
        absl::StrFormat("metrics: cannot listen on %s: %s", address,
                        error != 0 ? std::error_code(error, std::generic_category()).message()
                                   : std::string("the address cannot be bound")));
  }
  raw->listener = std::thread([raw] {
    pthread_setname_np(pthread_self(), "kairos-metrics");
    raw->server.listen_after_bind();
  });
  // httplib's accept loop marks itself running before anything that could block, so this
  // wait is short; until then server.stop() would not end it.
  if (!raw->listening.WaitForNotificationWithTimeout(absl::Seconds(30))) {
    // Cannot happen short of a machine that does not schedule the thread; the server and
    // its thread are left running rather than destroyed under the thread.
    raw->listener.detach();
    (void)impl.release();
    return absl::InternalError("metrics: the HTTP server's thread did not start in 30 s");
  }
  std::unique_ptr<MetricsExporter> exporter(new MetricsExporter(std::move(impl)));
  exporter->address_ = JoinHostPort(where->host, port);
  return exporter;
}

void MetricsExporter::Stop() {
  {
    absl::MutexLock lock(&impl_->mu);
    if (impl_->stopped) return;
    impl_->stopped = true;
  }
  impl_->server.stop();
  if (impl_->listener.joinable()) impl_->listener.join();
}

}  // namespace kairos::internal
