// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos::Buffer: a reference-counted, 64-byte aligned array of float32 values. Parameters
// and gradients travel in Buffers; copying a Buffer shares the storage (no element copy),
// which is how payloads reach the transport without a copy.
//
// kairos::ConstBuffer: the same, read-only. Values that may share memory with a server
// (a zero-copy pull, Worker::PullAsync into a ConstBuffer) are handed out as ConstBuffers,
// so that writing into them does not compile.
//
// Thread-safety: the reference count is atomic, so Buffers may be copied and destroyed
// from any thread. The elements are not synchronized: callers that share a Buffer across
// threads must not write it concurrently.

#ifndef KAIROS_BUFFER_H_
#define KAIROS_BUFFER_H_

#include <cstddef>
#include <memory>
#include <span>

#include "kairos/export.h"

namespace kairos {

class ConstBuffer;
namespace internal {
class ConstBufferAccess;
}  // namespace internal

inline constexpr std::size_t kBufferAlignment = 64;

class KAIROS_EXPORT Buffer {
 public:
  // An empty buffer (size() == 0, data() == nullptr).
  Buffer() = default;

  // `count` uninitialised floats, 64-byte aligned.
  static Buffer Allocate(std::size_t count);
  // `count` zeros.
  static Buffer Zeros(std::size_t count);
  // A new buffer holding a copy of `values`.
  static Buffer CopyOf(std::span<const float> values);
  // Views `count` floats at `data`, kept alive by `owner` for as long as any copy of the
  // returned buffer lives. REQUIRES: `data` is aligned for float.
  static Buffer Adopt(std::shared_ptr<void> owner, float* data, std::size_t count);

  float* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t size_bytes() const { return size_ * sizeof(float); }
  bool empty() const { return size_ == 0; }
  std::span<float> span() const { return {data_, size_}; }
  float& operator[](std::size_t i) const { return data_[i]; }

  // A view of elements [offset, offset + count) sharing this buffer's storage.
  // REQUIRES: offset + count <= size().
  Buffer Slice(std::size_t offset, std::size_t count) const;

  // Number of Buffers (and transport messages) sharing the storage; 0 when empty.
  long use_count() const { return owner_.use_count(); }
  // The shared owner of the storage (used to hand the payload to a transport).
  const std::shared_ptr<void>& owner() const { return owner_; }

 private:
  Buffer(std::shared_ptr<void> owner, float* data, std::size_t size)
      : owner_(std::move(owner)), data_(data), size_(size) {}

  std::shared_ptr<void> owner_;
  float* data_ = nullptr;
  std::size_t size_ = 0;
};

// A read-only Buffer: the elements can be read through it, never written. Copies share the
// storage, as Buffers do. A Buffer converts to a ConstBuffer (implicitly: giving up write
// access is always safe), never the other way; to modify the values, copy them:
//
//   kairos::Buffer mine = kairos::Buffer::CopyOf(pulled.span());
//
// The storage stays alive for as long as any copy lives; whoever else holds it (the server,
// over inproc) never modifies it while it is shared (it writes a fresh copy instead).
class ConstBuffer {
 public:
  // An empty buffer (size() == 0, data() == nullptr).
  ConstBuffer() = default;
  // Views `buffer`'s storage (shared, not copied).
  ConstBuffer(Buffer buffer) : buffer_(std::move(buffer)) {}  // NOLINT(runtime/explicit)

  const float* data() const { return buffer_.data(); }
  std::size_t size() const { return buffer_.size(); }
  std::size_t size_bytes() const { return buffer_.size_bytes(); }
  bool empty() const { return buffer_.empty(); }
  std::span<const float> span() const { return {buffer_.data(), buffer_.size()}; }
  const float& operator[](std::size_t i) const { return buffer_[i]; }

  // A view of elements [offset, offset + count) sharing this buffer's storage.
  // REQUIRES: offset + count <= size().
  ConstBuffer Slice(std::size_t offset, std::size_t count) const {
    return ConstBuffer(buffer_.Slice(offset, count));
  }

  // Number of Buffers and ConstBuffers (and transport messages) sharing the storage; 0
  // when empty.
  long use_count() const { return buffer_.use_count(); }

 private:
  friend class internal::ConstBufferAccess;  // the library's own writes (a pull's join)
  Buffer buffer_;
};

}  // namespace kairos

#endif  // KAIROS_BUFFER_H_
