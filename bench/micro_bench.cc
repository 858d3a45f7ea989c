// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_micro_bench: Google Benchmark micro-benchmarks of the units on the data path.
//
//   BM_PartitionOverlapping  the chunks a worker's call is cut into (common/partition.h)
//   BM_DecodeHeader          decoding and checking a received PUSH (wire/message.h)
//   BM_EncodeHeader          serializing a PUSH header (wire/message.h)
//   BM_SgdApply              the built-in "sgd" updater on 1 MiB of floats
//   BM_FirstNonFinite        the server's NaN/Inf check of a pushed gradient (common/limits.h),
//                            on 1 MiB (in cache, as a just-received push) and 64 MiB: compare
//                            with BM_SgdApply
//   BM_OptimizerApply        one update of 1 MiB of floats by each built-in optimizer
//   BM_SgdApplyMany          SGD on 1 MiB of floats with k gradients in one pass (coalesced pushes),
//                            per gradient: compare with BM_SgdApply
//   BM_BufferCopyOf          a copy of a chunk (what a copy-on-write update costs when a pull reply still shares the chunk)
//   BM_CopyFloats            a 1 MiB part of a 16 MiB pull copied into place, normal or streaming stores,
//                            into a destination larger than the caches
//
//   kairos_micro_bench [--benchmark_filter=REGEX] [--benchmark_format=csv] ...

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "benchmark/benchmark.h"
#include "common/copy.h"
#include "common/limits.h"
#include "common/partition.h"
#include "kairos/buffer.h"
#include "kairos/updater.h"
#include "wire/message.h"

namespace kairos::bench {
namespace {

using internal::Message;
using internal::RawFrame;
using internal::TablePartition;

// Arguments: table size (floats), shards. Ranges are random, 1 to 2 chunks long.
void BM_PartitionOverlapping(benchmark::State& state) {
  const uint64_t size = static_cast<uint64_t>(state.range(0));
  const int shards = static_cast<int>(state.range(1));
  const uint64_t chunk = uint64_t{1} << 18;
  TablePartition partition(size, shards, chunk);
  std::mt19937_64 rng(42);
  std::vector<std::pair<uint64_t, uint64_t>> ranges(1024);
  for (auto& [begin, end] : ranges) {
    begin = rng() % size;
    end = std::min(size, begin + 1 + rng() % (2 * chunk));
  }
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& [begin, end] = ranges[i++ % ranges.size()];
    benchmark::DoNotOptimize(partition.Overlapping(begin, end));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PartitionOverlapping)
    ->Args({1 << 10, 1})
    ->Args({1 << 24, 2})
    ->Args({uint64_t{1} << 30, 8});

// A PUSH of `floats` values as the transport hands it over: a header frame and a payload.
Message MakePush(uint64_t floats) {
  Message m;
  m.header.set_kind(wire::PUSH);
  m.header.set_request_id(123456);
  m.header.set_sender(7);
  m.header.set_table(0);
  m.header.set_offset(262144);
  m.header.set_length(floats);
  m.header.set_clock(42);
  m.payloads.push_back(Buffer::Zeros(floats));
  return m;
}

// Argument: payload floats. Decode parses the header and checks the frames; the payload is
// adopted, not copied, so the time hardly depends on its size.
void BM_DecodeHeader(benchmark::State& state) {
  Message m = MakePush(static_cast<uint64_t>(state.range(0)));
  auto header = std::make_shared<std::string>(internal::EncodeHeader(m));
  const Buffer& payload = m.payloads[0];
  for (auto _ : state) {
    std::vector<RawFrame> frames(2);
    frames[0] = RawFrame{header, header->data(), header->size()};
    frames[1] = RawFrame{payload.owner(), payload.data(), payload.size_bytes()};
    auto decoded = internal::Decode(std::move(frames));
    if (!decoded.ok()) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(decoded);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["header_bytes"] = static_cast<double>(header->size());
}
BENCHMARK(BM_DecodeHeader)->Arg(16)->Arg(1 << 18);

void BM_EncodeHeader(benchmark::State& state) {
  Message m = MakePush(1 << 18);
  for (auto _ : state) benchmark::DoNotOptimize(internal::EncodeHeader(m));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeHeader);

// Argument: floats (262144 = 1 MiB, the default chunk).
void BM_SgdApply(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  auto updater = MakeBuiltinUpdater(UpdaterSpec{});
  if (!updater.ok()) {
    state.SkipWithError("no sgd updater");
    return;
  }
  Buffer values = Buffer::Zeros(n);
  Buffer gradient = Buffer::Zeros(n);
  for (auto _ : state) {
    Updater::Update u;
    u.gradient = gradient.span();
    u.learning_rate = 0.01f;
    u.step_scale = 0.5f;
    (*updater)->Apply(values.span(), {}, u);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(n * sizeof(float)));
}
BENCHMARK(BM_SgdApply)->Arg(1 << 18)->Arg(1 << 24);

// Argument: floats checked.
void BM_FirstNonFinite(benchmark::State& state) {
  std::vector<float> gradient(static_cast<std::size_t>(state.range(0)), 0.5f);
  for (auto _ : state) {
    benchmark::DoNotOptimize(internal::FirstNonFinite(gradient));
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * sizeof(float));
}
BENCHMARK(BM_FirstNonFinite)->Arg(1 << 18)->Arg(1 << 24);

// Arguments: gradients per pass (each 1 MiB of floats). Bytes: gradient bytes applied.
void BM_SgdApplyMany(benchmark::State& state) {
  constexpr std::size_t n = std::size_t{1} << 18;
  const int count = static_cast<int>(state.range(0));
  auto updater = MakeBuiltinUpdater(UpdaterSpec{});
  if (!updater.ok()) {
    state.SkipWithError("no sgd updater");
    return;
  }
  Buffer values = Buffer::Zeros(n);
  std::vector<Buffer> gradients;
  std::vector<Updater::Update> weighted;
  for (int i = 0; i < count; ++i) gradients.push_back(Buffer::Zeros(n));
  for (const Buffer& g : gradients) {
    Updater::Update u;
    u.gradient = g.span();
    u.learning_rate = 0.01f;
    u.step_scale = 0.5f;
    weighted.push_back(u);
  }
  for (auto _ : state) {
    (*updater)->ApplyMany(values.span(), {}, weighted);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * count * static_cast<int64_t>(n * sizeof(float)));
}
BENCHMARK(BM_SgdApplyMany)->Arg(1)->Arg(2)->Arg(4);

// Argument: the optimizer (0 sgd, 1 momentum, 2 nesterov, 3 adagrad, 4 adam, 5 adamw,
// 6 add). One update of 1 MiB of floats (the default chunk) and its state.
void BM_OptimizerApply(benchmark::State& state) {
  static const char* const kNames[] = {"sgd",     "momentum", "nesterov", "adagrad",
                                       "adam",    "adamw",    "add"};
  const char* name = kNames[state.range(0)];
  constexpr std::size_t n = std::size_t{1} << 18;
  auto updater = MakeBuiltinUpdater(UpdaterSpec{name, 0.01f});
  if (!updater.ok()) {
    state.SkipWithError("no such updater");
    return;
  }
  state.SetLabel(name);
  Buffer values = Buffer::Zeros(n);
  Buffer opt_state = Buffer::Zeros(n * (*updater)->state_per_element());
  Buffer gradient = Buffer::Zeros(n);
  Updater::Update u;
  u.gradient = gradient.span();
  u.learning_rate = 0.01f;
  for (auto _ : state) {
    (*updater)->Apply(values.span(), opt_state.span(), u);
    ++u.step;
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(n * sizeof(float)));
}
BENCHMARK(BM_OptimizerApply)->DenseRange(0, 6);

// Arguments: 1 = streaming stores. Copies 1 MiB parts into 8 destinations of 16 MiB in turn,
// as the parts of 16 MiB pulls land in the caller's buffers.
void BM_CopyFloats(benchmark::State& state) {
  constexpr std::size_t kPart = std::size_t{1} << 18;
  constexpr std::size_t kValue = 16 * kPart;
  const bool stream = state.range(0) != 0;
  Buffer source = Buffer::Zeros(kPart);
  std::vector<Buffer> destinations;
  for (int i = 0; i < 8; ++i) destinations.push_back(Buffer::Zeros(kValue));
  std::size_t step = 0;
  for (auto _ : state) {
    Buffer& d = destinations[(step / 16) % destinations.size()];
    internal::CopyFloats(d.data() + (step % 16) * kPart, source.data(), kPart, stream);
    benchmark::ClobberMemory();
    ++step;
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kPart * sizeof(float)));
}
BENCHMARK(BM_CopyFloats)->Arg(0)->Arg(1);

// Argument: floats.
void BM_BufferCopyOf(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  Buffer source = Buffer::Zeros(n);
  for (auto _ : state) {
    Buffer copy = Buffer::CopyOf(source.span());
    benchmark::DoNotOptimize(copy.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(n * sizeof(float)));
}
BENCHMARK(BM_BufferCopyOf)->Arg(1 << 18)->Arg(1 << 24);

}  // namespace
}  // namespace kairos::bench

int main(int argc, char** argv) {
  benchmark::AddCustomContext("kairos_build_type", kairos::bench::BuildType());
  benchmark::AddCustomContext("load", kairos::bench::LoadAverage());
  const std::vector<std::string> warnings = kairos::bench::BuildWarnings();
  for (std::size_t i = 0; i < warnings.size(); ++i) {
    benchmark::AddCustomContext("WARNING_" + std::to_string(i + 1), warnings[i]);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
