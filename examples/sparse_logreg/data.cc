// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The libsvm reader and writer, the weights file and the generator of the sparse
// logistic-regression example (data.h).

#include "sparse_logreg/data.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace logreg {
namespace {

// SplitMix64 (Steele, Lea and Flood 2014): the generator's only source of randomness, so that
// its output is the same with every standard library.
uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(Mix64(seed)) {}
  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return Mix64(state_);
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform in [lo, hi].
  int Between(int lo, int hi) {
    return lo + static_cast<int>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  // Standard normal (Box-Muller).
  double Normal() {
    const double u1 = 1.0 - Uniform();  // (0, 1]
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }

 private:
  uint64_t state_;
};

absl::string_view Trim(absl::string_view s) {
  size_t b = 0;
  while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
  size_t e = s.size();
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return s.substr(b, e - b);
}

// Splits at spaces and tabs.
std::vector<absl::string_view> Fields(absl::string_view s) {
  std::vector<absl::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    const size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

// Reads a text file line by line, each at most kMaxLineBytes, and calls `fn(line_number, line)`
// (without the end of line) until it returns an error or the file ends; `stop` ends early.
absl::Status ForEachLine(
    const std::string &path,
    const std::function<absl::Status(int64_t, absl::string_view, bool *)> &fn) {
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> file(std::fopen(path.c_str(), "rb"),
                                                        &std::fclose);
  if (file == nullptr) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  std::vector<char> block(size_t{1} << 16);
  std::string line;
  int64_t number = 1;
  bool stop = false;
  while (!stop) {
    const size_t n = std::fread(block.data(), 1, block.size(), file.get());
    if (n == 0) {
      if (std::ferror(file.get())) {
        return absl::DataLossError(absl::StrCat(path, ": read error after line ", number - 1));
      }
      break;
    }
    size_t start = 0;
    for (size_t i = 0; i < n && !stop; ++i) {
      if (block[i] != '\n') continue;
      if (line.size() + (i - start) > kMaxLineBytes) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ":", number, ": the line is longer than ", kMaxLineBytes, " bytes"));
      }
      line.append(block.data() + start, i - start);
      if (absl::Status s = fn(number, line, &stop); !s.ok()) return s;
      line.clear();
      ++number;
      start = i + 1;
    }
    if (stop) break;
    if (line.size() + (n - start) > kMaxLineBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", number, ": the line is longer than ", kMaxLineBytes, " bytes"));
    }
    line.append(block.data() + start, n - start);
  }
  if (!stop && !line.empty()) return fn(number, line, &stop);  // no final end of line
  return absl::OkStatus();
}

absl::Status AtLine(const std::string &path, int64_t line, const absl::Status &s) {
  return absl::InvalidArgumentError(absl::StrCat(path, ":", line, ": ", s.message()));
}

// G(x), an antiderivative of x^-exponent.
double PowerLawIntegral(double x, double exponent) {
  const double a = 1.0 - exponent;
  return std::abs(a) < 1e-12 ? std::log(x) : std::pow(x, a) / a;
}

// The drift's shift of the ids of example `i` of a set of `total` (GeneratorConfig::drift):
// training examples by their place in the set, test examples (set 1) at its end.
uint64_t DriftShift(const GeneratorConfig& c, uint64_t set, int64_t i, int64_t total) {
  const double t = set == 1 ? 1.0 : static_cast<double>(i) / static_cast<double>(total);
  return static_cast<uint64_t>(std::floor(t * c.drift * static_cast<double>(c.num_ids)));
}

// One block of examples of a set (`count` examples from example `first` of `total`), from
// its own stream of random numbers.
void GenerateBlock(const GeneratorConfig& c, const PowerLaw& law, uint64_t set, int64_t block,
                   int64_t first, int64_t count, int64_t total, Dataset* out) {
  Rng rng(c.seed * 0x100000001b3ULL + Mix64((set << 40) ^ static_cast<uint64_t>(block)));
  std::vector<uint64_t> ids;
  const std::vector<float> ones(static_cast<size_t>(c.max_active), 1.0f);
  for (int64_t e = 0; e < count; ++e) {
    const int active = rng.Between(c.min_active, c.max_active);
    const uint64_t shift = DriftShift(c, set, first + e, total);
    ids.clear();
    while (static_cast<int>(ids.size()) < active) {
      const uint64_t id = law.Id(rng.Uniform()) + shift;
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
    std::sort(ids.begin(), ids.end());
    // The label's uniform number for now (Generate draws the label once the bias is known).
    const auto label = static_cast<float>(rng.Uniform());
    out->Add(label, ids, std::span<const float>(ones.data(), ids.size()));
  }
}

// A set of `count` examples, in blocks generated in parallel and joined in order.
Dataset GenerateSet(const GeneratorConfig &c, const PowerLaw &law, uint64_t set, int64_t count) {
  constexpr int64_t kBlock = 4096;
  const int64_t blocks = (count + kBlock - 1) / kBlock;
  std::vector<Dataset> parts(static_cast<size_t>(blocks));
  const int threads = static_cast<int>(
      std::clamp<int64_t>(c.threads > 0 ? c.threads : std::thread::hardware_concurrency(), 1,
                          std::max<int64_t>(1, blocks)));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int64_t b = t; b < blocks; b += threads) {
        GenerateBlock(c, law, set, b, b * kBlock, std::min(kBlock, count - b * kBlock), count,
                      &parts[static_cast<size_t>(b)]);
      }
    });
  }
  for (std::thread &th : pool) th.join();
  Dataset out;
  size_t features = 0;
  for (const Dataset &p : parts) features += p.ids.size();
  out.labels.reserve(static_cast<size_t>(count));
  out.offsets.reserve(static_cast<size_t>(count) + 1);
  out.ids.reserve(features);
  out.values.reserve(features);
  for (Dataset &p : parts) {
    const uint64_t base = out.ids.size();
    out.labels.insert(out.labels.end(), p.labels.begin(), p.labels.end());
    for (size_t i = 1; i < p.offsets.size(); ++i) out.offsets.push_back(base + p.offsets[i]);
    out.ids.insert(out.ids.end(), p.ids.begin(), p.ids.end());
    out.values.insert(out.values.end(), p.values.begin(), p.values.end());
    p = Dataset();
  }
  return out;
}

std::string Float(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

void Dataset::Add(float label, std::span<const uint64_t> feature_ids,
                  std::span<const float> feature_values) {
  labels.push_back(label);
  ids.insert(ids.end(), feature_ids.begin(), feature_ids.end());
  values.insert(values.end(), feature_values.begin(), feature_values.end());
  offsets.push_back(ids.size());
}

double Dataset::PositiveRate() const {
  if (labels.empty()) return 0.0;
  double positives = 0.0;
  for (float y : labels) positives += y;
  return positives / static_cast<double>(labels.size());
}

absl::Status ParseLibsvmLine(absl::string_view line, Dataset *out) {
  if (const size_t hash = line.find('#'); hash != absl::string_view::npos) {
    line = line.substr(0, hash);
  }
  line = Trim(line);
  if (line.empty()) return absl::OkStatus();
  const std::vector<absl::string_view> fields = Fields(line);
  double label = 0.0;
  if (!absl::SimpleAtod(fields[0], &label) || !(label == 0.0 || label == 1.0 || label == -1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("label '", fields[0], "' is not 0, 1, -1 or +1"));
  }
  std::vector<uint64_t> ids;
  std::vector<float> values;
  ids.reserve(fields.size() - 1);
  values.reserve(fields.size() - 1);
  for (size_t f = 1; f < fields.size(); ++f) {
    const absl::string_view field = fields[f];
    const size_t colon = field.find(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("feature ", f, " '", field, "' is not <id>:<value>"));
    }
    const absl::string_view id_text = field.substr(0, colon);
    const absl::string_view value_text = field.substr(colon + 1);
    uint64_t id = 0;
    if (id_text.empty() || id_text[0] == '+' || id_text[0] == '-' ||
        !absl::SimpleAtoi(id_text, &id)) {
      return absl::InvalidArgumentError(absl::StrCat("feature ", f, " '", field, "': the id '",
                                                     id_text,
                                                     "' is not an unsigned 64-bit integer"));
    }
    float value = 0.0f;
    if (!absl::SimpleAtof(value_text, &value) || !std::isfinite(value)) {
      return absl::InvalidArgumentError(absl::StrCat("feature ", f, " '", field, "': the value '",
                                                     value_text, "' is not a finite number"));
    }
    ids.push_back(id);
    values.push_back(value);
  }
  std::vector<uint64_t> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  if (auto it = std::adjacent_find(sorted.begin(), sorted.end()); it != sorted.end()) {
    return absl::InvalidArgumentError(absl::StrCat("feature id ", *it, " appears twice"));
  }
  out->Add(label > 0.0 ? 1.0f : 0.0f, ids, values);
  return absl::OkStatus();
}

absl::StatusOr<Dataset> ReadLibsvm(const std::string &path, int64_t max_examples) {
  Dataset data;
  absl::Status s =
      ForEachLine(path, [&](int64_t number, absl::string_view line, bool *stop) -> absl::Status {
        if (max_examples >= 0 && static_cast<int64_t>(data.num_examples()) >= max_examples) {
          *stop = true;
          return absl::OkStatus();
        }
        if (absl::Status p = ParseLibsvmLine(line, &data); !p.ok()) return AtLine(path, number, p);
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  return data;
}

absl::Status WriteLibsvm(const std::string &path, const Dataset &data) {
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> file(std::fopen(path.c_str(), "w"),
                                                        &std::fclose);
  if (file == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  std::string line;
  for (size_t i = 0; i < data.num_examples(); ++i) {
    line.clear();
    line.push_back(data.labels[i] > 0.5f ? '1' : '0');
    const std::span<const uint64_t> ids = data.example_ids(i);
    const std::span<const float> values = data.example_values(i);
    for (size_t f = 0; f < ids.size(); ++f) {
      absl::StrAppend(&line, " ", ids[f], ":",
                      values[f] == 1.0f ? std::string("1") : Float(values[f]));
    }
    line += '\n';
    if (std::fwrite(line.data(), 1, line.size(), file.get()) != line.size()) {
      return absl::DataLossError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
    }
  }
  if (std::fflush(file.get()) != 0) {
    return absl::DataLossError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

double TrueModel::Score(const Dataset &data, size_t example) const {
  double z = bias;
  const std::span<const uint64_t> ids = data.example_ids(example);
  const std::span<const float> values = data.example_values(example);
  for (size_t f = 0; f < ids.size(); ++f) {
    if (ids[f] >= 1 && ids[f] <= weights.size()) z += weights[ids[f] - 1] * values[f];
  }
  return z;
}

absl::Status WriteTrueModel(const std::string &path, const TrueModel &model) {
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> file(std::fopen(path.c_str(), "w"),
                                                        &std::fclose);
  if (file == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  bool ok = std::fprintf(file.get(), "bias %.17g\n", model.bias) > 0;  // a double, exactly
  for (size_t k = 0; k < model.weights.size() && ok; ++k) {
    ok = std::fprintf(file.get(), "%zu %s\n", k + 1, Float(model.weights[k]).c_str()) > 0;
  }
  if (!ok || std::fflush(file.get()) != 0) {
    return absl::DataLossError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<TrueModel> ReadTrueModel(const std::string &path) {
  TrueModel model;
  bool have_bias = false;
  absl::Status s =
      ForEachLine(path, [&](int64_t number, absl::string_view line, bool *) -> absl::Status {
        const std::vector<absl::string_view> fields = Fields(Trim(line));
        const auto bad = [&](const std::string &what) {
          return absl::InvalidArgumentError(absl::StrCat(path, ":", number, ": ", what));
        };
        if (fields.size() != 2) {
          return bad(absl::StrCat("want two fields, found ", fields.size()));
        }
        double value = 0.0;
        if (!absl::SimpleAtod(fields[1], &value) || !std::isfinite(value)) {
          return bad(absl::StrCat("the value '", fields[1], "' is not a finite number"));
        }
        if (!have_bias) {
          if (fields[0] != "bias") return bad("the first line must be 'bias <value>'");
          model.bias = value;
          have_bias = true;
          return absl::OkStatus();
        }
        uint64_t id = 0;
        if (!absl::SimpleAtoi(fields[0], &id) || id != model.weights.size() + 1) {
          return bad(
              absl::StrCat("want id ", model.weights.size() + 1, ", found '", fields[0], "'"));
        }
        model.weights.push_back(static_cast<float>(value));
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  if (!have_bias) {
    return absl::InvalidArgumentError(absl::StrCat(path, ":1: the file is empty"));
  }
  return model;
}

PowerLaw::PowerLaw(uint64_t num_ids, double exponent)
    : num_ids_(num_ids), exponent_(exponent), a_(1.0 - exponent) {
  total_ = PowerLawIntegral(static_cast<double>(num_ids) + 1.0, exponent) -
           PowerLawIntegral(1.0, exponent);
  const uint64_t table = std::min(num_ids, kTableIds);
  upper_.resize(static_cast<size_t>(table));
  for (uint64_t k = 0; k < table; ++k) upper_[k] = Cumulative(static_cast<double>(k) + 2.0);
  guide_.resize(kGuide + 1);
  for (size_t j = 0; j <= kGuide; ++j) {
    const double u = static_cast<double>(j) / kGuide;
    guide_[j] =
        static_cast<uint32_t>(std::upper_bound(upper_.begin(), upper_.end(), u) - upper_.begin());
  }
}

double PowerLaw::Cumulative(double x) const {
  return (PowerLawIntegral(x, exponent_) - PowerLawIntegral(1.0, exponent_)) / total_;
}

uint64_t PowerLaw::Id(double u) const {
  // The first id whose upper bound is above u.
  // u is in [j / kGuide, (j + 1) / kGuide), so the first bound above it is at or after the
  // first bound above j / kGuide, and at or before the first above (j + 1) / kGuide.
  const size_t j = std::min(kGuide - 1, static_cast<size_t>(u * kGuide));
  const auto end =
      guide_[j + 1] < upper_.size() ? upper_.begin() + guide_[j + 1] + 1 : upper_.end();
  const auto it = std::upper_bound(upper_.begin() + guide_[j], end, u);
  if (it != upper_.end()) return static_cast<uint64_t>(it - upper_.begin()) + 1;
  if (upper_.size() == num_ids_) return num_ids_;
  // Beyond the table: solve Cumulative(x) = u for x.
  const double g = u * total_ + PowerLawIntegral(1.0, exponent_);
  const double x = std::abs(a_) < 1e-12 ? std::exp(g) : std::pow(g * a_, 1.0 / a_);
  const double id = std::floor(x);
  if (!(id > static_cast<double>(upper_.size()))) return upper_.size() + 1;
  if (id >= static_cast<double>(num_ids_)) return num_ids_;
  return static_cast<uint64_t>(id);
}

double PowerLaw::Probability(uint64_t id) const {
  const double r = static_cast<double>(id);
  return (PowerLawIntegral(r + 1.0, exponent_) - PowerLawIntegral(r, exponent_)) / total_;
}

absl::Status CheckGeneratorConfig(const GeneratorConfig &c) {
  const auto bad = [](const std::string &what) { return absl::InvalidArgumentError(what); };
  if (c.num_ids < 1 || c.num_ids > (uint64_t{1} << 32)) {
    return bad(absl::StrCat("--ids must be in [1, 2^32], got ", c.num_ids));
  }
  if (c.train_examples < 1) {
    return bad(absl::StrCat("--train-examples must be at least 1, got ", c.train_examples));
  }
  if (c.test_examples < 1) {
    return bad(absl::StrCat("--test-examples must be at least 1, got ", c.test_examples));
  }
  if (c.min_active < 1 || c.max_active < c.min_active) {
    return bad(absl::StrCat("the active features per example must satisfy 1 <= min <= max, got ",
                            c.min_active, " and ", c.max_active));
  }
  if (static_cast<uint64_t>(c.max_active) * 4 > c.num_ids) {
    return bad(absl::StrCat("--ids must be at least 4 x ", c.max_active,
                            " (the most active features of an example), got ", c.num_ids));
  }
  if (!(c.exponent > 0.0 && c.exponent <= 4.0)) {
    return bad(absl::StrCat("the power-law exponent must be in (0, 4], got ", c.exponent));
  }
  if (!(c.weight_stddev >= 0.0 && std::isfinite(c.weight_stddev)) || !std::isfinite(c.bias)) {
    return bad("the true weights' standard deviation and bias must be finite");
  }
  if (!(c.drift >= 0.0 && c.drift <= 64.0)) {
    return bad(absl::StrCat("--drift must be in [0, 64], got ", c.drift));
  }
  return absl::OkStatus();
}

absl::StatusOr<Generated> Generate(const GeneratorConfig &c) {
  if (absl::Status s = CheckGeneratorConfig(c); !s.ok()) return s;
  Generated g;
  g.truth.weights.resize(static_cast<size_t>(c.num_ids + DriftShift(c, 1, 0, 1)));
  Rng rng(c.seed ^ 0x5eed5eed5eed5eedULL);
  for (float &w : g.truth.weights) w = static_cast<float>(c.weight_stddev * rng.Normal());
  const PowerLaw law(c.num_ids, c.exponent);
  g.train = GenerateSet(c, law, 0, c.train_examples);
  g.test = GenerateSet(c, law, 1, c.test_examples);
  // The bias: `bias` less the training examples' mean sum of weights, so that the mean score
  // is `bias`. Then each label from its uniform number.
  g.truth.bias = 0.0;
  double sum = 0.0;
  for (size_t i = 0; i < g.train.num_examples(); ++i) sum += g.truth.Score(g.train, i);
  g.truth.bias = c.bias - sum / static_cast<double>(g.train.num_examples());
  for (Dataset *d : {&g.train, &g.test}) {
    for (size_t i = 0; i < d->num_examples(); ++i) {
      const double p = 1.0 / (1.0 + std::exp(-g.truth.Score(*d, i)));
      d->labels[i] = d->labels[i] < p ? 1.0f : 0.0f;
    }
  }
  return g;
}

}  // namespace logreg
