// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos::testing::FaultyNetwork: the public front of the fault-injecting transport
// (transport/faulty_transport.h). It translates the plan (kinds by name) and the log.

#include "kairos/testing/faulty_network.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "transport/faulty_transport.h"

namespace kairos::testing {
namespace {

namespace in = ::kairos::internal;

absl::StatusOr<in::FaultPlan> ToInternal(const NetworkFaultPlan& plan) {
  in::FaultPlan out;
  out.seed = plan.seed;
  for (std::size_t i = 0; i < plan.faults.size(); ++i) {
    const NetworkFault& f = plan.faults[i];
    auto bad = [i](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat("network fault ", i, ": ", what));
    };
    if (!(f.probability >= 0.0 && f.probability <= 1.0)) {
      return bad(absl::StrFormat("probability %g is not in [0, 1]", f.probability));
    }
    if (f.delay < absl::ZeroDuration()) return bad("the delay is negative");
    if (f.partition_length < absl::ZeroDuration()) return bad("the partition length is negative");
    if (f.reorder_after < 1) return bad("reorder_after is below 1");
    in::FaultRule r;
    r.action = f.action;
    for (const std::string& name : f.kinds) {
      wire::Kind kind;
      if (!wire::Kind_Parse(name, &kind)) {
        return bad(absl::StrCat("no message kind is named \"", name,
                                "\" (the kinds are docs/wire_format.md's: PUSH, PULL, ...)"));
      }
      r.kinds.push_back(kind);
    }
    r.direction = f.direction;
    r.node = f.node;
    r.probability = f.probability;
    r.max_hits = f.max_hits;
    r.delay = f.delay;
    r.reorder_after = f.reorder_after;
    r.partition_start = f.partition_start;
    r.partition_length = f.partition_length;
    r.partition_after_messages = f.partition_after_messages;
    out.rules.push_back(std::move(r));
  }
  return out;
}

}  // namespace

struct FaultyNetwork::Impl {
  std::shared_ptr<in::FaultyTransportFactory> factory;
};

std::string NetworkFaultEvent::ToString() const {
  return absl::StrCat(node, ": ", in::FaultActionName(action), " ",
                      in::FaultDirectionName(direction), " ", kind);
}

absl::StatusOr<std::unique_ptr<FaultyNetwork>> FaultyNetwork::Create(NetworkFaultPlan plan) {
  absl::StatusOr<in::FaultPlan> internal_plan = ToInternal(plan);
  if (!internal_plan.ok()) return internal_plan.status();
  auto impl = std::make_unique<Impl>();
  impl->factory = std::make_shared<in::FaultyTransportFactory>(*std::move(internal_plan));
  return std::unique_ptr<FaultyNetwork>(new FaultyNetwork(std::move(impl)));
}

FaultyNetwork::FaultyNetwork(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FaultyNetwork::~FaultyNetwork() = default;

std::shared_ptr<TransportFactory> FaultyNetwork::factory() const { return impl_->factory; }

std::vector<NetworkFaultEvent> FaultyNetwork::events() const {
  std::vector<NetworkFaultEvent> out;
  for (const in::FaultEvent& e : impl_->factory->log()->events()) {
    out.push_back(NetworkFaultEvent{e.action, e.direction, wire::Kind_Name(e.kind), e.node});
  }
  return out;
}

int64_t FaultyNetwork::Count(FaultAction action, std::string_view kind) const {
  if (kind.empty()) return impl_->factory->log()->Count(action);
  wire::Kind k;
  if (!wire::Kind_Parse(std::string(kind), &k)) return 0;
  return impl_->factory->log()->Count(action, k);
}

std::string FaultyNetwork::Summary() const { return impl_->factory->log()->Summary(); }
uint64_t FaultyNetwork::activity() const { return impl_->factory->log()->activity(); }
int64_t FaultyNetwork::in_flight() const { return impl_->factory->log()->in_flight(); }
bool FaultyNetwork::AwaitInFlightAtMost(int64_t n, absl::Duration timeout) const {
  return impl_->factory->log()->AwaitInFlightAtMost(n, timeout);
}

}  // namespace kairos::testing
