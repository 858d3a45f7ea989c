// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Data of the sparse logistic-regression example: examples with sparse features in the
// libsvm text format (a reader and a writer), and a generator of synthetic click-like data
// with a known true weight vector (docs/examples.md, "sparse_logreg").
//
// The libsvm format, one example per line:
//
//   <label> <id>:<value> <id>:<value> ...
//
// The label is 0 or 1; -1 and +1 (the libsvm convention for binary classes) are read as 0
// and 1, and any decimal spelling of these numbers is accepted (`1.0`, `+1`). Each id is an
// unsigned 64-bit decimal integer (any order, each at most once per line), each value a
// finite decimal number. Fields are separated by spaces or tabs; a `#` starts a comment
// that runs to the end of the line; empty lines (and lines of only a comment) are skipped;
// a trailing `\r` is ignored. A line is at most kMaxLineBytes long.

#ifndef KAIROS_EXAMPLES_SPARSE_LOGREG_DATA_H_
#define KAIROS_EXAMPLES_SPARSE_LOGREG_DATA_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace logreg {

// Examples with sparse features, stored row by row (compressed sparse rows). Thread-safety:
// immutable once built; share it as const.
struct Dataset {
  std::vector<float> labels;            // 0 or 1, one per example
  std::vector<uint64_t> offsets = {0};  // example i's features are [offsets[i], offsets[i+1])
  std::vector<uint64_t> ids;            // the features' ids
  std::vector<float> values;            // the features' values

  size_t num_examples() const { return labels.size(); }
  size_t num_features(size_t i) const { return offsets[i + 1] - offsets[i]; }
  std::span<const uint64_t> example_ids(size_t i) const {
    return {ids.data() + offsets[i], num_features(i)};
  }
  std::span<const float> example_values(size_t i) const {
    return {values.data() + offsets[i], num_features(i)};
  }
  // Appends one example; `ids` and `values` have the same length.
  void Add(float label, std::span<const uint64_t> ids, std::span<const float> values);
  // The fraction of examples labelled 1 (0 for an empty set).
  double PositiveRate() const;
};

// The longest line the reader accepts, in bytes (without its end of line).
inline constexpr size_t kMaxLineBytes = size_t{1} << 20;

// Parses one line into `out` (nothing is added when the line is empty or only a comment).
// Errors are InvalidArgument saying what is wrong with the line, without its position.
absl::Status ParseLibsvmLine(absl::string_view line, Dataset* out);

// Reads a libsvm file: at most `max_examples` examples (< 0: all). NotFound when the file
// cannot be opened; InvalidArgument `path:LINE: what` for the first malformed line (LINE
// counts from 1) or a line longer than kMaxLineBytes; DataLoss when reading fails.
absl::StatusOr<Dataset> ReadLibsvm(const std::string& path, int64_t max_examples = -1);

// Writes `data` as libsvm text (labels 0 and 1, values with enough digits to be read back
// exactly). Errors name the file.
absl::Status WriteLibsvm(const std::string& path, const Dataset& data);

// The weights that generated a data set: the score of an example is bias + sum of
// weights[id - 1] * value over its features (ids 1..weights.size(); other ids weigh 0).
struct TrueModel {
  double bias = 0.0;
  std::vector<float> weights;

  double Score(const Dataset& data, size_t example) const;
};

// A weights file: the first line `bias <value>`, then line k + 1 is `<k> <value>` for
// k = 1, 2, ... (consecutive ids from 1). Errors as ReadLibsvm's, `path:LINE: what`.
absl::Status WriteTrueModel(const std::string& path, const TrueModel& model);
absl::StatusOr<TrueModel> ReadTrueModel(const std::string& path);

// Synthetic click-like data (docs/examples.md, "The generator"): feature ids 1..num_ids
// whose frequencies follow a power law (id r is drawn with probability proportional to
// the integral of x^-exponent over [r, r + 1), so id 1 is the most frequent), between
// min_active and max_active distinct binary features per example (value 1, uniform count),
// true weights drawn Normal(0, weight_stddev) per id, and each label drawn 1 with
// probability sigmoid(b + sum of the example's weights), where b = bias - the training
// examples' mean sum of weights (so that the mean score is `bias` whatever the weights of the
// most frequent ids, which appear in most examples). With `drift` > 0 the ids' popularity
// moves over the training set, as new items and users replace old ones in a click stream:
// the example at fraction t of the training set draws rank r from the power law and gets
// id r + floor(t x drift x num_ids), so ids 1..num_ids x (1 + drift) occur, each popular for
// a while; the test set is drawn at t = 1 (the stream's end: the present). Deterministic: the
// same config gives the same data on every machine and with any number of threads.
struct GeneratorConfig {
  uint64_t num_ids = 1'000'000;
  int64_t train_examples = 2'000'000;
  int64_t test_examples = 50'000;
  int min_active = 20;
  int max_active = 40;
  double exponent = 1.3;
  double weight_stddev = 0.4;
  double bias = -1.5;
  double drift = 0.0;  // in [0, 64]: how far the popular ids move, in num_ids
  uint64_t seed = 1;
  int threads = 0;  // generating threads; 0: the machine's (the data do not depend on it)
};

struct Generated {
  Dataset train;
  Dataset test;
  TrueModel truth;
};

// InvalidArgument naming the field out of range.
absl::Status CheckGeneratorConfig(const GeneratorConfig& config);
absl::StatusOr<Generated> Generate(const GeneratorConfig& config);

// The generator's power law over ids 1..num_ids: id r has probability
// (G(r + 1) - G(r)) / (G(num_ids + 1) - G(1)), G an antiderivative of x^-exponent, and Id(u)
// maps a uniform u in [0, 1) to the id whose cumulative interval holds it (the inverse of
// that distribution function). The ids up to kTableIds are found in a table of their
// cumulative probabilities (found through a guide table: one bucket per 1/65536 of u), the
// others by the closed-form inverse.
class PowerLaw {
 public:
  static constexpr uint64_t kTableIds = 16384;
  PowerLaw(uint64_t num_ids, double exponent);
  uint64_t Id(double u) const;
  double Probability(uint64_t id) const;

 private:
  double Cumulative(double x) const;  // P(id < x), x in [1, num_ids + 1]
  uint64_t num_ids_;
  double exponent_;
  double a_;                   // 1 - exponent
  double total_;               // G(num_ids + 1) - G(1)
  std::vector<double> upper_;  // upper_[k] = P(id <= k + 1), k < min(num_ids, kTableIds)
  // guide_[j]: the index in upper_ of the first bound above j / kGuide, so the search for u
  // starts at guide_[floor(u kGuide)] and ends by guide_[floor(u kGuide) + 1].
  static constexpr size_t kGuide = 1 << 16;
  std::vector<uint32_t> guide_;
};

}  // namespace logreg

#endif  // KAIROS_EXAMPLES_SPARSE_LOGREG_DATA_H_
