// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The policy seams (docs/policies.md): a synchronization policy is five orthogonal parts,
// each pure logic. No sockets, threads or wall clock in here: events carry timestamps, and
// decisions are returned as values, so the same objects run in a server shard and in the
// virtual-time simulator.
//
//   part          | runs on        | question
//   Gate          | server shard   | may worker w's read at clock c be served now?
//   Aggregation   | server (chunk) | apply a push now, or accumulate it into a bucket?
//   Weighting     | server (apply) | how much does an update count, given its staleness?
//   Pull          | worker         | when are parameters fetched (on demand, eager)?
//                                      (PullSpec + EagerLearningRateScale; the schedule
//                                      itself lives in the worker)
//   Straggler     | server + coord | who is a straggler; what happens to its stale push?
//
// Thread-safety: none of these classes is thread-safe; the owner (one server shard, or the
// simulator) serializes calls.

#ifndef KAIROS_POLICY_POLICY_H_
#define KAIROS_POLICY_POLICY_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kairos::policy {

// A worker's rank, 0 .. num_workers - 1.
using WorkerId = int;
// A worker clock: the number of iterations the worker has completed.
using Tick = int64_t;
inline constexpr Tick kUnbounded = std::numeric_limits<Tick>::max();

enum class MemberState { kActive, kDead, kFinished };

// Per-worker clocks and membership as one shard sees them. The minimum is taken over active
// workers only, so a dead or finished worker never holds anybody back. MinActiveClock() and
// num_active() are O(1) (a cached minimum, kept up to date by SetClock and SetState; see
// worker_clocks.cc); MaxActiveClock() and ActiveBelow() scan every worker.
class WorkerClocks {
 public:
  // All workers start active at clock 0. REQUIRES: num_workers >= 0.
  explicit WorkerClocks(int num_workers);

  int num_workers() const { return static_cast<int>(clocks_.size()); }
  // Whether w names a worker (0 <= w < num_workers()). Every other method that takes a
  // WorkerId REQUIRES Contains(w): the server validates the sender before it gets here.
  bool Contains(WorkerId w) const { return w >= 0 && w < num_workers(); }
  Tick clock(WorkerId w) const { return clocks_[w]; }
  MemberState state(WorkerId w) const { return states_[w]; }
  bool active(WorkerId w) const { return states_[w] == MemberState::kActive; }
  int num_active() const { return num_active_; }

  // Raises w's clock to `clock`. Clocks never go back: a smaller value is ignored, so a
  // duplicated or late report is harmless.
  void SetClock(WorkerId w, Tick clock);
  // Any transition is allowed (a restarted worker may become active again); the minimum
  // follows the states at the time it is asked.
  void SetState(WorkerId w, MemberState state);

  // Smallest clock of an active worker; kUnbounded when none is active.
  Tick MinActiveClock() const { return min_active_; }
  // Largest clock of an active worker; 0 when none is active.
  Tick MaxActiveClock() const;
  // Active workers whose clock is < `clock` (those a read at a later clock waits for), in
  // increasing id order.
  std::vector<WorkerId> ActiveBelow(Tick clock) const;

 private:
  // Rescans every worker for min_active_ and num_at_min_.
  void RecomputeMin();

  std::vector<Tick> clocks_;
  std::vector<MemberState> states_;
  // Invariants: num_active_ = number of active workers; min_active_ = smallest clock of an
  // active worker (kUnbounded when none is active); num_at_min_ = number of active workers
  // whose clock is min_active_ (0 when none is active).
  int num_active_ = 0;
  Tick min_active_ = kUnbounded;
  int num_at_min_ = 0;
};

// ---------------------------------------------------------------------------- Gate
// Decides when a read may be served. The owner reports events and asks Admits() for each
// waiting read again after every event (reads are re-checked, never lost).
//
// Clock convention: clock(w) is the number of iterations w has completed; a read "at clock
// c" is the pull that starts w's iteration c + 1, issued after w reported clock c (messages
// from one worker to one shard arrive in order, so OnClock(w, c) precedes that read).
// SSP(s) admits a read at clock c iff c - MinActiveClock() <= s; BSP is s = 0 (wait until
// every active worker has completed clock c), ASP is s = kUnbounded (never wait).
// DSSP(s_L, r_max) admits iff c - MinActiveClock() <= s_L or c is covered by w's grant;
// PSP(beta, s) iff c - (smallest clock among beta sampled other workers) <= s
// (docs/policies.md has each rule in full).
// Per worker, the decisions of a gate's controller (DSSP's synchronization controller,
// asked when the worker is a fastest one more than s_L ahead with no grant left).
struct GateCounts {
  uint64_t controller_calls = 0;  // the controller was asked for r*
  uint64_t zero_answers = 0;      // it answered r* = 0 (cold start included): the read waits
  uint64_t grants = 0;            // grants that released at least one read beyond s_L
  uint64_t granted_reads = 0;     // the reads those grants released (after the strict cut)
};

class Gate {
 public:
  virtual ~Gate() = default;

  // Worker w completed an iteration: its clock is now `clock`, at time `now`. A clock
  // below the one already known is ignored. Called once per iteration (per shard): this is
  // the iteration-boundary event whose times DSSP's controller reads.
  virtual void OnClock(WorkerId w, Tick clock, absl::Time now) = 0;
  // Worker w pushed at clock `clock`, at time `now`. Called once per chunk message, so
  // possibly many times per iteration: no gate derives iteration timing from it.
  virtual void OnPush(WorkerId w, Tick clock, absl::Time now) {}
  // Worker w left (dead or finished): it leaves every minimum.
  virtual void OnLeave(WorkerId w, MemberState why) = 0;
  // Worker w, not active, is active again from clock `clock`: a restarted worker that
  // rejoined the job (docs/policies.md, "Membership"). REQUIRES: !clocks().active(w) and
  // clock >= clocks().clock(w). The default raises w's clock (OnClock, which ignores an
  // inactive worker otherwise) and makes it active (OnLeave with kActive); a gate that keeps
  // more per-worker history than the clocks overrides it to start that history afresh.
  virtual void OnRejoin(WorkerId w, Tick clock, absl::Time now) {
    OnClock(w, clock, now);
    OnLeave(w, MemberState::kActive);
  }

  // May w's read at clock `clock` be served now? May update internal state (a PSP sample,
  // a DSSP grant), but answers the same until the next event.
  virtual bool Admits(WorkerId w, Tick clock) = 0;
  // The active workers a refused read of w at `clock` waits for (for deadline messages).
  virtual std::vector<WorkerId> Blockers(WorkerId w, Tick clock) const = 0;

  virtual const WorkerClocks& clocks() const = 0;
  // What the gate's controller decided for worker w so far (DSSP: docs/policies.md §4); all
  // zero for a gate without one.
  virtual GateCounts counts(WorkerId w) const { return {}; }
};

// ------------------------------------------------------------------------- Aggregation
// Per chunk: whether a push is applied at once or summed into a bucket applied later.
//   immediate      every push is kApplyNow.
//   round-average  (BSP) a push at clock c is accumulated into bucket c; bucket c is ready
//                  when every active worker has completed iteration c + 1
//                  (MinActiveClock() > c), and is applied once as sum / divisor, where the
//                  divisor is the number of distinct workers that pushed into it. The owner
//                  applies ready buckets before it re-checks the gate, so a BSP read at clock
//                  c sees exactly rounds 0 .. c - 1.
//   n-softsync     (SA-ASGD, Zhang et al. 2016) every push, from any worker, is accumulated
//                  into the open bucket 0, 1, 2, ... of the chunk; a bucket is ready when it
//                  holds c = max(1, floor(A / n)) pushes and is applied as sum / c. A is the
//                  number of workers given to the factory until the first TakeReady, then
//                  the number of active workers in the clocks TakeReady last saw; when A
//                  drops (a worker leaves), an open bucket that already holds the new c is
//                  ready at once, with divisor = its count. With every worker active exactly
//                  floor(pushes / c) buckets are applied, each with divisor c; with no
//                  active worker c = 1, so a partial bucket is flushed. Clocks are ignored.
struct AggregateDecision {
  enum class Kind { kApplyNow, kAccumulate };
  Kind kind = Kind::kApplyNow;
  int64_t bucket = 0;  // kAccumulate: the bucket to add the gradient to
};

// A bucket that is complete: apply (sum of its gradients) / divisor once.
struct ReadyBucket {
  int64_t bucket = 0;
  int contributions = 0;  // pushes summed into it
  float divisor = 1.0f;   // the sum is divided by this before it is applied (always >= 1)
};

class Aggregation {
 public:
  virtual ~Aggregation() = default;
  // A push of w at clock `clock` arrives for this chunk.
  virtual AggregateDecision OnPush(WorkerId w, Tick clock) = 0;
  // Buckets complete given the shard's clocks (round-average: every active worker has
  // passed the round; all of them when no worker is active), removed from the pending set,
  // in increasing bucket order. Empty for immediate aggregation.
  virtual std::vector<ReadyBucket> TakeReady(const WorkerClocks& clocks) = 0;
  // Number of buckets accumulated and not yet taken (0 for immediate aggregation).
  virtual int num_pending() const { return 0; }
};

// -------------------------------------------------------------------------- Weighting
// What the server knows about one push's staleness when it applies it.
struct StalenessInfo {
  Tick push_clock = 0;        // the clock the push was made at
  // The shard version the push's gradient was computed on: the worker's last read, or
  // under eager pull the read before it (the gradient was computed on that one).
  uint64_t version_read = 0;
  uint64_t version_now = 0;  // shard version now
  // VSGD: the value staleness VS of this push for the chunk, ||D_i||: the norm of the sum
  // of the updates applied to the chunk since that read (or the scalar
  // bound sum ||Delta||, WeightingSpec::ValueMode). Filled by the server only when
  // Weighting::NeedsValueStaleness(); 0 otherwise.
  double value_staleness = 0.0;
  uint64_t iteration_staleness() const {
    return version_now > version_read ? version_now - version_read : 0;
  }
};

// The server creates one Weighting per chunk (MakeWeighting), so state kept inside one (the
// EMA of the value weighting) is per chunk. Scale is called once per push, in push order.
//   constant   every update counts 1.
//   staleness  (SA-ASGD) 1 / max(sigma, 1), or 1 / (sigma + 1) with plus_one, where
//              sigma = info.iteration_staleness().
//   value      (VSGD) from VS = info.value_staleness: normalized 1 / max(1, VS / E), where E
//              is the EMA of the VS of the earlier pushes (the first push sets E = VS and
//              gets 1; E is updated after the scale is computed: E <- a VS + (1 - a) E), or
//              dutta min(C / VS^2, max) (max when VS = 0). A NaN or negative VS counts as
//              0; +inf gives 0; only finite values enter the EMA.
class Weighting {
 public:
  virtual ~Weighting() = default;
  // Multiplier applied to w's gradient (on top of the updater's learning rate).
  virtual float Scale(WorkerId w, const StalenessInfo& info) = 0;
  // Whether Scale reads info.value_staleness: the server keeps the per-worker sums D_i
  // (memory W x chunk size, or one scalar per worker in bound mode) only when true.
  virtual bool NeedsValueStaleness() const { return false; }
};

// ------------------------------------------------------------------------ Straggler
// What happens to a push, given its staleness. none: every push is applied with weight 1.
struct StragglerDecision {
  enum class Action { kApply, kDrop, kDownWeight };
  Action action = Action::kApply;
  float weight = 1.0f;   // kDownWeight: extra multiplier
  bool refresh = false;  // the worker must pull fresh parameters before its next step
};

// none: every push is kApply with weight 1.
// saps (SaPS 2019): with tau = info.iteration_staleness() (or, with detect_ema, the EMA of
// w's tau including this push) and S_max = s_max, or max(1, 2(N - 1)) when s_max = 0, plus
// N under pull=eager (N = max(1, num_workers)): a push with tau > S_max is kDrop (or
// kDownWeight with weight down_weight), refresh = true; any other is kApply. Fast workers
// are never held back.
class StragglerPolicy {
 public:
  virtual ~StragglerPolicy() = default;
  virtual StragglerDecision OnPush(WorkerId w, const StalenessInfo& info) = 0;
  // The workers whose latest push (or EMA, with detect_ema) exceeded S_max, in increasing
  // id order. Empty for none.
  virtual std::vector<WorkerId> Stragglers() const { return {}; }
};

// ---------------------------------------------------------------------------- Spec
// A parsed policy spec string (docs/policies.md has the grammar and every name):
//   spec    := preset ("+" option)*  |  option ("+" option)*
//   preset  := name [":" params]
//   option  := ("gate" | "agg" | "weight" | "pull" | "straggler") "=" name [":" params]
//   params  := key "=" value ("," key "=" value)*
// e.g. "bsp", "asp", "ssp:s=3", "dssp:s=3,r=12", "psp:beta=2,s=1,seed=7", "sa-asgd:n=4",
// "vsgd", "eager", "saps", "gate=bsp+agg=immediate", "ssp:s=3+weight=value+pull=eager".
// Names are lower-case and case-sensitive; blanks around tokens are ignored. A seam an
// option does not name keeps its default (asp, immediate, constant, on-demand, none). A
// preset sets gate and agg, and an option that sets either to another value than the
// preset's is an error; sa-asgd, vsgd, eager and saps also set the kind of weight, pull or
// straggler, and an option may change that seam's parameters but not its kind.
//
// Every name, parameter and preset is described once, in the policy registry (registry.h);
// PolicyHelp() lists them.

// DSSP's defaults, the authors' (docs/references.md DSSP-1): s_L = 3, r_max = 12 (range
// [3, 15]).
inline constexpr Tick kDsspDefaultLowerBound = 3;
inline constexpr Tick kDsspDefaultRMax = 12;
// The largest r_max accepted: the controller costs O(r_max) per call (once per iteration of
// the fastest worker at most), and the paper's range is 12 wide.
inline constexpr Tick kDsspMaxRMax = 10000;
// VSGD's gate when the preset gives no s: SSP(3), so that "vsgd" is an ablation of
// "ssp:s=3" (docs/references.md VSGD-4).
inline constexpr Tick kVsgdDefaultStaleness = 3;

// A parameter value as the registry holds it: an integer (a count, a clock, a choice's
// index), a 64-bit unsigned integer (a seed) or a real number.
using ParamValue = std::variant<int64_t, uint64_t, double>;

// A policy added through the registry without an enumerator or fields of its own in the
// structs below (docs/policies.md "Adding a policy"): its seam's kind is kRegistered, and
// its name and parameter values are kept here. Empty for every built-in policy.
struct RegisteredPolicy {
  std::string name{};
  std::vector<std::pair<std::string, ParamValue>> params{};  // every parameter, by key

  // The value of parameter `key`: an integer or a choice's index, an unsigned integer, a
  // real number. REQUIRES: the parameter exists and has that type.
  int64_t Integer(std::string_view key) const { return std::get<int64_t>(*Find(key)); }
  uint64_t Unsigned(std::string_view key) const { return std::get<uint64_t>(*Find(key)); }
  double Real(std::string_view key) const { return std::get<double>(*Find(key)); }
  const ParamValue* Find(std::string_view key) const;
  void Set(std::string_view key, const ParamValue& value);

  friend bool operator==(const RegisteredPolicy&, const RegisteredPolicy&) = default;
};

struct GateSpec {
  // BSP = SSP(0), ASP = SSP(unbounded); DSSP (Zhao et al. 2019) and PSP (Wang et al. 2017)
  // add the parameters below.
  enum class Kind { kSsp, kDssp, kPsp, kRegistered };
  // DSSP: how many reads beyond s_L a grant of r* admits (docs/references.md DSSP-5).
  enum class DsspGrant {
    kExact,    // r*: the read at the grant's clock and the next r* - 1 (default)
    kLiteral,  // r* + 1, as Algorithm 1 is printed
  };
  // DSSP: whether a grant is cut so that no read is admitted more than
  // s_U = s_L + r_max clocks ahead of the slowest active worker (docs/references.md DSSP-6).
  enum class DsspBound {
    kStrict,  // default: the SSP(s_U) guarantee of the paper's Theorem 2 holds
    kNone,    // paper-literal: unbounded behind a very slow straggler
  };

  Kind kind = Kind::kSsp;
  // SSP: s. DSSP: the lower bound s_L. PSP: s. kUnbounded: never wait.
  Tick staleness = kUnbounded;
  // DSSP only: r_max = s_U - s_L, the most extra clocks one grant can give,
  // 0 <= r_max <= kDsspMaxRMax and s_L + r_max <= kUnbounded.
  Tick r_max = kDsspDefaultRMax;
  DsspGrant grant = DsspGrant::kExact;
  DsspBound bound = DsspBound::kStrict;
  // PSP only: beta >= 0, the number of other active workers sampled per read (0: never
  // wait); seed of the gate's generator (deterministic decisions for a seed and an event
  // sequence).
  int beta = 0;
  uint64_t seed = 0;

  RegisteredPolicy registered{};  // kRegistered only

  // Equal when they select the same gate: same kind, staleness and parameters of that kind.
  // The fields of the other kinds are ignored (ParsePolicySpec leaves them at their
  // defaults, and ToString does not print them). Equality of a kRegistered policy that the
  // built-in registry does not know compares `registered` whole (Registry::Equal compares
  // the parameters that apply).
  friend bool operator==(const GateSpec& a, const GateSpec& b);
};
// Equality of the four structs below compares the kind and the fields that kind (and its
// sub-choice) reads, as GateSpec's does: a field of another kind is ignored, as ToString
// ignores it.
struct AggregationSpec {
  enum class Kind { kImmediate, kRoundAverage, kSoftSync, kRegistered };
  Kind kind = Kind::kImmediate;
  // kSoftSync: n >= 1 (n-softsync: a bucket holds c = max(1, floor(W / n)) pushes).
  int n = 0;
  RegisteredPolicy registered{};  // kRegistered only
  friend bool operator==(const AggregationSpec& a, const AggregationSpec& b);
};
struct WeightingSpec {
  enum class Kind { kConstant, kStaleness, kValue, kRegistered };
  Kind kind = Kind::kConstant;
  // kStaleness: lr0 / (sigma + 1) instead of lr0 / max(sigma, 1) (docs/references.md
  // SA-ASGD-4).
  bool plus_one = false;
  // kValue: the map from the value staleness VS to the multiplier (docs/references.md
  // VSGD-3, DUTTA-1):
  // kNormalized 1 / max(1, VS / EMA(VS)); kDutta min(C / VS^2, dutta_max).
  enum class ValueMap { kNormalized, kDutta };
  ValueMap value_map = ValueMap::kNormalized;
  double dutta_c = 1.0;    // kDutta: C > 0 (relative units: the map returns a multiplier)
  double dutta_max = 1.0;  // kDutta: the largest multiplier, > 0
  double ema_alpha = 0.1;  // kNormalized: EMA weight of the newest VS, in (0, 1]
  // kValue: how the SERVER computes VS (docs/references.md VSGD-2): kExact ||D_i|| (memory
  // W x chunk size), kBound the scalar upper bound sum ||Delta|| (one double per worker and
  // chunk).
  enum class ValueMode { kExact, kBound };
  ValueMode value_mode = ValueMode::kExact;
  RegisteredPolicy registered{};  // kRegistered only
  friend bool operator==(const WeightingSpec& a, const WeightingSpec& b);
};
struct PullSpec {
  // kEager (PS+ 2022): the worker pushes and requests the next parameters in one message
  // and computes on the previous answer; the schedule lives in the worker.
  enum class Kind { kOnDemand, kEager, kRegistered };
  Kind kind = Kind::kOnDemand;
  // kEager: the worker scales its learning rate by EagerLearningRateScale
  // (docs/references.md PSPLUS-3); false: constant learning rate.
  bool modulate_lr = true;
  RegisteredPolicy registered{};  // kRegistered only
  friend bool operator==(const PullSpec& a, const PullSpec& b);
};
struct StragglerSpec {
  enum class Kind { kNone, kSaps, kRegistered };
  Kind kind = Kind::kNone;
  // kSaps: S_max >= 1; 0 means the default max(1, 2(N - 1)), plus N under pull=eager
  // (docs/references.md SAPS-2).
  int64_t s_max = 0;
  // kSaps: what happens to a push whose staleness exceeds S_max (refresh = true either way).
  enum class Action { kDrop, kDownWeight };
  Action action = Action::kDrop;
  double down_weight = 0.1;  // kDownWeight: the push's multiplier, in (0, 1]
  bool detect_ema = false;   // compare EMA(tau) per worker with S_max instead of tau
  double ema_alpha = 0.1;    // detect_ema: EMA weight of the newest tau, in (0, 1]
  RegisteredPolicy registered{};  // kRegistered only
  friend bool operator==(const StragglerSpec& a, const StragglerSpec& b);
};

struct PolicySpec {
  GateSpec gate;
  AggregationSpec aggregation;
  WeightingSpec weighting;
  PullSpec pull;
  StragglerSpec straggler;
  friend bool operator==(const PolicySpec&, const PolicySpec&) = default;
};

// Parses a spec string. InvalidArgument says what is wrong and where, e.g.
// "policy 'ssp:s=x': parameter 's' must be a non-negative integer, got 'x'".
absl::StatusOr<PolicySpec> ParsePolicySpec(std::string_view text);
// OK iff `spec` is one ParsePolicySpec can return: each seam's policy is registered, and
// the parameters that apply are in their registered ranges (staleness >= 0; DSSP's r_max in
// [0, kDsspMaxRMax] with s_L + r_max <= kUnbounded; PSP's beta >= 0; softsync's n >= 1;
// the value weighting's ema_alpha in (0, 1], dutta_c and dutta_max finite and > 0; SaPS's
// s_max >= 0, down_weight and ema_alpha in (0, 1]); and round-average aggregation only
// under the BSP gate, SSP(0) (with s > 0 a read could miss the reader's own pushes still
// held in a bucket). Softsync is allowed with every gate. InvalidArgument otherwise,
// naming the policy and the field ("dssp r_max must be in [0, 10000], got 10001").
absl::Status ValidatePolicySpec(const PolicySpec& spec);
// The canonical spec string: a preset when one matches, then options for the seams that
// differ from it, in the order gate, agg, weight, pull, straggler. For every valid spec,
// ParsePolicySpec(ToString(s)) == s.
std::string ToString(const PolicySpec& spec);
// Every preset, seam, policy and parameter (type, range, default, meaning), for --help.
std::string PolicyHelp();

// Factories: the objects a shard (or the simulator) drives. Never null.
// REQUIRES: ValidatePolicySpec(spec).ok(), num_workers >= 0.
std::unique_ptr<Gate> MakeGate(const PolicySpec& spec, int num_workers);
std::unique_ptr<Aggregation> MakeAggregation(const PolicySpec& spec, int num_workers);
std::unique_ptr<Weighting> MakeWeighting(const PolicySpec& spec, int num_workers);
std::unique_ptr<StragglerPolicy> MakeStragglerPolicy(const PolicySpec& spec, int num_workers);

// PS+ worker-side learning-rate multiplier for an update whose worker saw `foreign_updates`
// updates by other workers between its two latest reads: 1 / max(1, tau / (N - 1)) when
// spec.modulate_lr, else 1 (spec.kind is not consulted: the worker calls this under
// pull=eager). A worker in lock-step with the others (tau = N - 1) keeps lr0.
// REQUIRES: num_workers >= 1 (N = 1: always 1; a smaller value is treated as 1; a negative
// foreign_updates as 0).
float EagerLearningRateScale(const PullSpec& spec, int64_t foreign_updates, int num_workers);

// ------------------------------------------------------------------------ DSSP controller
// Table A's row for one worker (docs/references.md DSSP-2): the times of its two latest
// iteration boundaries, as the shard saw them (Gate::OnClock events).
struct DsspHistory {
  absl::Time latest;    // A[i][0]
  absl::Time previous;  // A[i][1]
};

// DSSP's synchronization controller, Algorithm 2 of Zhao et al. 2019, as a pure function.
// With I_p = fastest.latest - fastest.previous and I_s = slowest.latest - slowest.previous:
//   Sim_p[r] = fastest.latest + r * I_p          r = 0 .. r_max
//   Sim_s[k] = slowest.latest + (k + 1) * I_s    k = 0 .. r_max
// returns the r minimising min_k |Sim_s[k] - Sim_p[r]|, the smallest such r on ties
// (docs/references.md DSSP-3). The distances are exact (absl::Duration); cost O(r_max).
// REQUIRES: 0 <= r_max <= kDsspMaxRMax.
Tick DsspController(const DsspHistory& fastest, const DsspHistory& slowest, Tick r_max);

}  // namespace kairos::policy

#endif  // KAIROS_POLICY_POLICY_H_
