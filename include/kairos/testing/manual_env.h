// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ManualEnv: virtual time for tests (the kairos::testing library). Its time stands still until
// the test moves it (Advance, Set); a node given it (NodeOptions::env, ClusterOptions::env)
// ticks when it starts and after each move, and never otherwise (kairos/env.h, "Time"). So a
// test moves the time in steps shorter than the heartbeat interval and than the timeouts it
// does not mean to expire, letting the messages of one step arrive before the next:
//
//   auto env = std::make_shared<kairos::testing::ManualEnv>();
//   kairos::ClusterOptions options;
//   options.env = env;
//   ...
//   env->Advance(absl::Milliseconds(100));   // every node ticks once, at the new time
//
// Files and threads are those of the environment it wraps (Env::Default unless given), so
// a ManualEnv can sit on top of a kairos::testing::FaultyEnv.
//
// Thread-safety: every method is safe to call from any thread.

#ifndef KAIROS_TESTING_MANUAL_ENV_H_
#define KAIROS_TESTING_MANUAL_ENV_H_

#include <cstdint>
#include <functional>
#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kairos/env.h"

namespace kairos::testing {

class ManualEnv final : public EnvWrapper {
 public:
  // `base` (which must outlive this) provides the files and threads.
  explicit ManualEnv(absl::Time start = absl::UnixEpoch(), const Env& base = Env::Default())
      : EnvWrapper(base), now_(start) {}

  absl::Time Now() const override;
  bool IsVirtual() const override { return true; }
  uint64_t Watch(std::function<void()> fn) const override;
  void Unwatch(uint64_t id) const override;

  // Moves the time, then calls the watchers (the nodes tick). Moving it backwards is allowed
  // (Set), but the nodes then see time go back.
  void Advance(absl::Duration d);
  void Set(absl::Time t);

 private:
  void Notify() const;

  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  // Held while watchers run, so that Unwatch waits for a running one.
  mutable absl::Mutex watch_mu_;
  mutable std::map<uint64_t, std::function<void()>> watchers_ ABSL_GUARDED_BY(watch_mu_);
  mutable uint64_t next_watch_id_ ABSL_GUARDED_BY(watch_mu_) = 1;
};

}  // namespace kairos::testing

#endif  // KAIROS_TESTING_MANUAL_ENV_H_
