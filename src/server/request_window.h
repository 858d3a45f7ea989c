// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// RequestWindow: which request ids of one worker a server has already taken, so that a
// message delivered twice (a duplicating network, a retry) is handled once. A worker gives
// every message a new id from one counter; its caller threads may hand messages to its I/O
// thread slightly out of id order, so ids arrive nearly, not strictly, increasing. The
// window remembers the highest id seen and which of the kWidth ids below it were seen: an
// id seen before is a duplicate; an id below the window is too old to tell, and refused
// (a legitimate message is never that late: kWidth messages of the same worker overtook it).
//
// Thread-safety: none; the server's I/O thread owns it.

#ifndef KAIROS_SERVER_REQUEST_WINDOW_H_
#define KAIROS_SERVER_REQUEST_WINDOW_H_

#include <bitset>
#include <cstddef>
#include <string>
#include <cstdint>

namespace kairos::internal {

class RequestWindow {
 public:
  static constexpr uint64_t kWidth = 1024;
  enum class Verdict { kNew, kDuplicate, kTooOld };

  // Takes `id` (> 0) if it is new.
  Verdict Take(uint64_t id);
  uint64_t highest() const { return highest_; }

  // The window as bytes (the update log's bases, docs/durability.md): 8 bytes of highest,
  // then kWidth / 8 bytes of the ids seen. FromBytes takes exactly that many.
  static constexpr std::size_t kBytes = 8 + kWidth / 8;
  void AppendBytes(std::string* out) const;
  static RequestWindow FromBytes(const char* bytes);

 private:
  uint64_t highest_ = 0;
  // Bit (id % kWidth) is set when id, within (highest_ - kWidth, highest_], was taken.
  std::bitset<kWidth> seen_;
};

}  // namespace kairos::internal

#endif  // KAIROS_SERVER_REQUEST_WINDOW_H_
