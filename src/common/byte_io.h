// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Fixed-width fields in a byte string, little-endian as the machine stores them: what the
// checkpoint files, the update log and the update log's bases are made of. A reader never
// reads past its input: each Get says whether the field was there, and counts and lengths
// are bounded before anything is copied.

#ifndef KAIROS_COMMON_BYTE_IO_H_
#define KAIROS_COMMON_BYTE_IO_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

namespace kairos::internal {

static_assert(std::endian::native == std::endian::little,
              "kairos's files are little-endian, as the machine's fields");

class ByteWriter {
 public:
  template <typename T>
  void Put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    buf_.append(reinterpret_cast<const char*>(&v), sizeof(v));
  }
  // A uint32_t length, then the bytes.
  void PutString(const std::string& s) {
    Put<uint32_t>(static_cast<uint32_t>(s.size()));
    buf_.append(s);
  }
  // A uint64_t count, then the elements.
  template <typename T>
  void PutArray(std::span<const T> v) {
    Put<uint64_t>(v.size());
    buf_.append(reinterpret_cast<const char*>(v.data()), v.size_bytes());
  }
  std::string& bytes() { return buf_; }

 private:
  std::string buf_;
};

// Reads what ByteWriter writes; `bytes` must outlive the reader.
class ByteReader {
 public:
  explicit ByteReader(const std::string& bytes) : p_(bytes.data()), left_(bytes.size()) {}
  template <typename T>
  bool Get(T* v) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (left_ < sizeof(T)) return false;
    std::memcpy(v, p_, sizeof(T));
    Skip(sizeof(T));
    return true;
  }
  // A string of at most `max` bytes.
  bool GetString(std::size_t max, std::string* s) {
    uint32_t n = 0;
    if (!Get(&n) || n > max || n > left_) return false;
    s->assign(p_, n);
    Skip(n);
    return true;
  }
  // An array of exactly `expected` elements (`out` may be null when there are none: an
  // empty vector's data()).
  template <typename T>
  bool GetArray(uint64_t expected, T* out) {
    uint64_t n = 0;
    if (!Get(&n) || n != expected || n > left_ / sizeof(T)) return false;
    if (n == 0) return true;  // memcpy's pointers must not be null, even for no bytes
    std::memcpy(out, p_, n * sizeof(T));
    Skip(n * sizeof(T));
    return true;
  }
  // The next `n` bytes, unread, or null when fewer are left.
  const char* Peek(std::size_t n) const { return n <= left_ ? p_ : nullptr; }
  void Skip(std::size_t n) {
    p_ += n;
    left_ -= n;
  }
  std::size_t left() const { return left_; }

 private:
  const char* p_;
  std::size_t left_;
};

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_BYTE_IO_H_
