// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// TuneProcessAllocator changes the whole process, so each case that measures it runs in a
// process of its own (a death test's child, re-executed: "threadsafe" style), and this
// test's own process is never tuned.

#include "kairos/allocator.h"

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;

constexpr std::size_t kBlock = std::size_t{1} << 20;  // a 1 MiB message
constexpr int kBlocks = 96;  // more than one thread heap holds (64 MiB)
constexpr int64_t kPages = kBlocks * kBlock / 4096;

int64_t ThreadMinorFaults() {
  struct rusage u;
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_minflt;
}

// The page faults of the last of three rounds in which one new thread (as ZeroMQ's I/O
// thread, allocating from an arena of its own) receives kBlocks messages of 1 MiB (allocates
// and writes them) and then frees them oldest first, as a server does once it has applied
// a 96 MiB push (the first rounds settle the heaps' layout). The burst spans two of the
// thread's 64 MiB heaps, so the second heap must survive being emptied too. Reused memory does not fault;
// memory the allocator gave back does, a page at a time.
int64_t LastRoundFaults() {
  int64_t faults = -1;
  std::thread receiver([&faults] {
    for (int round = 0; round < 3; ++round) {
      const int64_t begin = ThreadMinorFaults();
      std::vector<char*> blocks;
      for (int i = 0; i < kBlocks; ++i) {
        char* p = static_cast<char*>(std::malloc(kBlock));
        if (p == nullptr) std::abort();
        std::memset(p, round + 1, kBlock);
        asm volatile("" : : "r"(p) : "memory");  // the writes and the block are used
        blocks.push_back(p);
      }
      for (char* p : blocks) std::free(p);
      if (round == 2) faults = ThreadMinorFaults() - begin;
    }
  });
  receiver.join();
  return faults;
}

class AllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Both cases measure glibc's allocator, which a sanitizer's replaces (and then
    // TuneProcessAllocator answers Unimplemented).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "a sanitizer's allocator replaces glibc's in this build";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
    GTEST_SKIP() << "a sanitizer's allocator replaces glibc's in this build";
#endif
#endif
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
};

TEST_F(AllocatorTest, ATunedAllocatorReusesTheMemoryOfFreedMessages) {
  EXPECT_EXIT(
      {
        if (absl::Status s = TuneProcessAllocator(); !s.ok()) {
          std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
          std::exit(2);
        }
        const int64_t faults = LastRoundFaults();
        std::fprintf(stderr, "last round: %lld page faults for %lld pages\n",
                     static_cast<long long>(faults), static_cast<long long>(kPages));
        std::exit(faults >= 0 && faults <= kPages / 20 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "last round");
}

// The control: left as it is, glibc gives the freed messages' pages back (it trims its
// heap) and the next messages fault them in again. If this ever fails, the tuning has
// nothing left to fix on this C library, and the case above proves nothing.
TEST_F(AllocatorTest, AnUntunedAllocatorFaultsTheFreedMessagesInAgain) {
  EXPECT_EXIT(
      {
        const int64_t faults = LastRoundFaults();
        std::fprintf(stderr, "last round: %lld page faults for %lld pages\n",
                     static_cast<long long>(faults), static_cast<long long>(kPages));
        std::exit(faults >= kPages / 2 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "last round");
}

TEST(AllocatorTuningTest, SizesOutsideWhatTheAllocatorTakesAreRefusedByName) {
  AllocatorTuning tuning;
  tuning.heap_allocation_max_bytes = 0;
  absl::Status s = TuneProcessAllocator(tuning);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("heap_allocation_max_bytes"));

  tuning.heap_allocation_max_bytes = uint64_t{64} << 20;  // past glibc's 32 MiB
  s = TuneProcessAllocator(tuning);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("32 MiB"));

  tuning = AllocatorTuning{};
  tuning.keep_free_bytes = uint64_t{1} << 40;  // more than mallopt's int
  s = TuneProcessAllocator(tuning);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("keep_free_bytes"));

  tuning = AllocatorTuning{};
  tuning.heap_pad_bytes = uint64_t{1} << 40;
  s = TuneProcessAllocator(tuning);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("heap_pad_bytes"));
}

}  // namespace
}  // namespace kairos
