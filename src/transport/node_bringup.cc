// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "transport/node_bringup.h"

#include "absl/strings/str_format.h"

namespace kairos::internal {
namespace {

class OneTransport final : public TransportFactory {
 public:
  explicit OneTransport(std::unique_ptr<Transport> transport) : transport_(std::move(transport)) {}

  absl::StatusOr<std::unique_ptr<Transport>> Make(const TransportOptions&) override {
    absl::MutexLock lock(&mu_);
    if (transport_ == nullptr) return absl::FailedPreconditionError("one transport only");
    return std::move(transport_);
  }

 private:
  absl::Mutex mu_;
  std::unique_ptr<Transport> transport_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

TransportOptions NodeTransportOptions(const NodeOptions& o, std::string name) {
  TransportOptions t;
  t.context = o.context;
  t.max_message_bytes = o.max_message_bytes;
  t.name = std::move(name);
  t.max_peers = o.max_peers;
  t.keys = o.keys;
  t.log_level = o.log_level;
  t.log_sink = o.log_sink;
  t.env = o.env;
  t.send_delay = o.send_delay;
  return t;
}

std::shared_ptr<TransportFactory> OneTransportFactory(std::unique_ptr<Transport> transport) {
  return std::make_shared<OneTransport>(std::move(transport));
}

bool NodeEnd::End(absl::Status status) {
  absl::MutexLock lock(&mu_);
  if (done_.HasBeenNotified()) return false;
  status_ = std::move(status);
  done_.Notify();
  return true;
}

absl::Status NodeEnd::status() const {
  if (!ended()) return absl::OkStatus();  // asked on every message: no lock while it runs
  absl::MutexLock lock(&mu_);
  return status_;
}

absl::Status NodeEnd::Wait(absl::Duration timeout, std::string_view who) const {
  if (!done_.WaitForNotificationWithTimeout(timeout)) {
    return absl::DeadlineExceededError(
        absl::StrFormat("%s: the job did not end within %s", who, absl::FormatDuration(timeout)));
  }
  return status();
}

}  // namespace kairos::internal
