// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// What the fuzz targets share: reading a fuzz input front to back as little-endian numbers
// and length-prefixed frames (ByteReader), writing inputs in the same form (ByteWriter, for
// the seed corpus), the `--write-seeds=DIR` mode of every target, a file in memory for the
// targets that read files (MemFile), and the libFuzzer entry points (KAIROS_FUZZ_TARGET).

#ifndef KAIROS_TESTS_FUZZ_FUZZ_INPUT_H_
#define KAIROS_TESTS_FUZZ_FUZZ_INPUT_H_

#include <errno.h>  // program_invocation_short_name
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace kairos::fuzz {

// Unless `ok`: prints "<target>: invariant broken: <what>" and aborts, so that libFuzzer
// reports the input that broke it.
inline void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "%s: invariant broken: %s\n", program_invocation_short_name, what);
  std::abort();
}

// Reads an input front to back. Past the end every number reads as 0 and every byte string
// as empty, so any input is a valid sequence of reads.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  std::size_t remaining() const { return size_ - pos_; }

  uint8_t U8() { return static_cast<uint8_t>(Number(1)); }
  uint16_t U16() { return static_cast<uint16_t>(Number(2)); }
  uint32_t U32() { return static_cast<uint32_t>(Number(4)); }
  uint64_t U64() { return Number(8); }
  bool Bool() { return (U8() & 1) != 0; }
  // Up to `n` bytes (fewer at the end of the input).
  std::string Bytes(std::size_t n) {
    n = std::min(n, remaining());
    std::string out(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return out;
  }
  // A frame: a u16 length, then that many bytes (fewer at the end of the input).
  std::string Frame() { return Bytes(U16()); }
  // One of `n` choices (n > 0).
  std::size_t Pick(std::size_t n) { return U8() % n; }

 private:
  uint64_t Number(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes && pos_ < size_; ++i) v |= uint64_t{data_[pos_++]} << (8 * i);
    return v;
  }

  const uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// Writes what ByteReader reads.
class ByteWriter {
 public:
  ByteWriter& U8(uint8_t v) { return Number(v, 1); }
  ByteWriter& U16(uint16_t v) { return Number(v, 2); }
  ByteWriter& U32(uint32_t v) { return Number(v, 4); }
  ByteWriter& U64(uint64_t v) { return Number(v, 8); }
  ByteWriter& Bytes(const std::string& b) {
    data_ += b;
    return *this;
  }
  ByteWriter& Frame(const std::string& b) { return U16(static_cast<uint16_t>(b.size())).Bytes(b); }
  // A u8 count, then that many frames.
  ByteWriter& Frames(const std::vector<std::string>& frames) {
    U8(static_cast<uint8_t>(frames.size()));
    for (const std::string& f : frames) Frame(f);
    return *this;
  }
  const std::string& data() const { return data_; }

 private:
  ByteWriter& Number(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) data_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  std::string data_;
};

using Seeds = std::vector<std::pair<std::string, std::string>>;  // file name, content

// For LLVMFuzzerInitialize: when the arguments hold `--write-seeds=DIR`, writes `seeds()`
// into DIR (created if needed) and exits, before libFuzzer reads its own flags.
template <typename MakeSeeds>
void MaybeWriteSeeds(int* argc, char*** argv, MakeSeeds seeds) {
  constexpr const char kFlag[] = "--write-seeds=";
  for (int i = 1; i < *argc; ++i) {
    const char* arg = (*argv)[i];
    if (std::strncmp(arg, kFlag, sizeof(kFlag) - 1) != 0) continue;
    const std::filesystem::path dir(arg + sizeof(kFlag) - 1);
    std::filesystem::create_directories(dir);
    int written = 0;
    for (const auto& [name, content] : seeds()) {
      std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
      out.write(content.data(), static_cast<std::streamsize>(content.size()));
      if (!out) {
        std::fprintf(stderr, "cannot write %s\n", (dir / name).c_str());
        std::exit(1);
      }
      ++written;
    }
    std::printf("wrote %d seeds to %s\n", written, dir.c_str());
    std::exit(0);
  }
}

// A file holding `bytes` in memory (memfd_create), named by a path any reader can open
// (/proc/self/fd/N); closed with the object.
class MemFile {
 public:
  explicit MemFile(const std::string& bytes) {
    fd_ = ::memfd_create("kairos-fuzz", 0);
    Require(fd_ >= 0, "memfd_create");
    std::size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + at, bytes.size() - at);
      Require(n > 0, "writing the memory file");
      at += static_cast<std::size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { ::close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace kairos::fuzz

// The two libFuzzer entry points of a target: `make_seeds()` (a Seeds) for --write-seeds,
// and every input handed to `run(data, size)`. At namespace scope, once per target.
#define KAIROS_FUZZ_TARGET(run, make_seeds)                                     \
  extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {                \
    ::kairos::fuzz::MaybeWriteSeeds(argc, argv, make_seeds);                    \
    return 0;                                                                   \
  }                                                                             \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) { \
    run(data, size);                                                            \
    return 0;                                                                   \
  }

#endif  // KAIROS_TESTS_FUZZ_FUZZ_INPUT_H_
