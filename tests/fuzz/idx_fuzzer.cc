// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target: the IDX readers of the simulator (src/sim/dataset.h, Fashion-MNIST for
// kairos_policy_sim) and of the Fashion-MNIST example (examples/fashion_mnist/data.h, its
// sources compiled in here). A data directory is given on a command line: its files are
// input, and a header's sizes are not to be trusted.
//
// Input: a selector byte (bits 0-1: the simulator's images or labels, the example's images
// or labels; bit 2: the file is gzip'd, else stored as it is), a byte for max_examples
// (255: all, else that many), then the file.
//
// Besides "no crash, no sanitizer report, no allocation past libFuzzer's limit": an error
// is DataLoss; images read have as many rows (columns for the example) as the header's
// count capped by max_examples, and values in [0, 1] (the simulator) or their bytes (the
// example); labels read are as many, and the example's are classes (0 to 9).
//
// `idx_fuzzer --write-seeds=DIR` writes the seed corpus (tests/fuzz/corpus/idx).

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fashion_mnist/data.h"
#include "sim/dataset.h"
#include "tests/fuzz/fuzz_input.h"

namespace kairos::fuzz {
namespace {

std::string Gzip(const std::string& raw) {
  z_stream z{};
  Require(deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK,
          "deflateInit2");
  std::string out(deflateBound(&z, static_cast<uLong>(raw.size())) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  Require(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

uint32_t BigEndian32(const std::string& file, std::size_t at) {
  uint32_t v = 0;
  for (std::size_t i = at; i < at + 4 && i < file.size(); ++i) {
    v = (v << 8) | static_cast<unsigned char>(file[i]);
  }
  return v;
}

// The count a reader returns for a file whose header announces `announced`.
uint64_t Expected(uint32_t announced, int max_examples) {
  return max_examples < 0 ? announced : std::min<uint64_t>(announced, max_examples);
}

void Refused(const absl::Status& s) { Require(absl::IsDataLoss(s), "a refused file is DataLoss"); }

void Run(const uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  const uint8_t flags = in.U8();
  const uint8_t max_byte = in.U8();
  const int max_examples = max_byte == 255 ? -1 : max_byte;
  const std::string raw = in.Bytes(in.remaining());
  MemFile file((flags & 4) != 0 ? Gzip(raw) : raw);
  const uint64_t count = Expected(BigEndian32(raw, 4), max_examples);
  switch (flags & 3) {
    case 0: {
      absl::StatusOr<sim::Dataset::Matrix> x = sim::ReadIdxImages(file.path(), max_examples);
      if (!x.ok()) return Refused(x.status());
      Require(static_cast<uint64_t>(x->rows()) == count, "as many images as announced");
      Require(static_cast<uint64_t>(x->cols()) ==
                  uint64_t{BigEndian32(raw, 8)} * BigEndian32(raw, 12),
              "rows x cols pixels each");
      for (Eigen::Index i = 0; i < x->size(); ++i) {
        Require(x->data()[i] >= 0.0f && x->data()[i] <= 1.0f, "pixels in [0, 1]");
      }
      break;
    }
    case 1: {
      absl::StatusOr<std::vector<int>> y = sim::ReadIdxLabels(file.path(), max_examples);
      if (!y.ok()) return Refused(y.status());
      Require(y->size() == count, "as many labels as announced");
      break;
    }
    case 2: {
      absl::StatusOr<fmnist::PixelMatrix> x = fmnist::ReadIdxImages(file.path(), max_examples);
      if (!x.ok()) return Refused(x.status());
      Require(static_cast<uint64_t>(x->cols()) == count, "as many images as announced");
      Require(static_cast<uint64_t>(x->rows()) ==
                  uint64_t{BigEndian32(raw, 8)} * BigEndian32(raw, 12),
              "rows x cols pixels each");
      break;
    }
    default: {
      absl::StatusOr<std::vector<int>> y = fmnist::ReadIdxLabels(file.path(), max_examples);
      if (!y.ok()) return Refused(y.status());
      Require(y->size() == count, "as many labels as announced");
      for (int label : *y) Require(label >= 0 && label < fmnist::kNumClasses, "classes");
      break;
    }
  }
}

std::string Header(std::vector<uint32_t> words) {
  std::string out;
  for (uint32_t w : words) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(w >> shift));
  }
  return out;
}

Seeds MakeSeeds() {
  Seeds s;
  std::string images = Header({0x00000803, 3, 4, 5});
  for (int i = 0; i < 3 * 20; ++i) images.push_back(static_cast<char>(i * 7));
  std::string labels = Header({0x00000801, 3}) + std::string("\x01\x09\x00", 3);
  for (uint8_t which = 0; which < 4; ++which) {
    const std::string& file = which % 2 == 0 ? images : labels;
    for (const uint8_t gz : {0, 4}) {
      s.push_back({"file-" + std::to_string(which) + (gz != 0 ? "-gz" : ""),
                   ByteWriter().U8(which | gz).U8(255).Bytes(file).data()});
    }
    s.push_back({"capped-" + std::to_string(which), ByteWriter().U8(which).U8(2).Bytes(file).data()});
  }
  // Headers that announce far more than the file holds.
  s.push_back({"images-announced-4g",
               ByteWriter().U8(0).U8(255).Bytes(Header({0x00000803, 0xffffffffu, 28, 28})).data()});
  s.push_back({"labels-announced-4g",
               ByteWriter().U8(1).U8(255).Bytes(Header({0x00000801, 0xffffffffu})).data()});
  s.push_back({"example-images-announced-2g",
               ByteWriter().U8(2).U8(255).Bytes(Header({0x00000803, 1u << 21, 32, 32})).data()});
  return s;
}

}  // namespace
}  // namespace kairos::fuzz

KAIROS_FUZZ_TARGET(kairos::fuzz::Run, kairos::fuzz::MakeSeeds)
