// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos._kairos: the Python binding of the public C++ API (docs/pytorch.md, "Python").
// The Python package `kairos` (python/kairos/__init__.py) re-exports it; kairos.torch adds
// the PyTorch helpers in Python.
//
// Arrays: a push reads any object with the buffer protocol; a C-contiguous float32 array
// (NumPy, or a CPU torch tensor's .numpy() view) is read in place, anything else converted
// to one first. A pull writes into a given C-contiguous, writable float32 array in place,
// or returns a new NumPy array. Every blocking call releases the GIL while it waits, so
// other Python threads (other workers of a LocalCluster) run. A kairos error is raised as
// kairos.Error, with .code (the absl status code's name, such as "NOT_FOUND") and .message.

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kairos/kairos.h"
#include "kairos/run.h"

namespace py = pybind11;

namespace {

PyObject* g_error = nullptr;  // kairos.Error, made at import

[[noreturn]] void Raise(const absl::Status& s) {
  py::object error = py::reinterpret_borrow<py::object>(g_error);
  py::object e = error(absl::StatusCodeToString(s.code()), std::string(s.message()));
  e.attr("code") = absl::StatusCodeToString(s.code());
  e.attr("message") = std::string(s.message());
  PyErr_SetObject(g_error, e.ptr());
  throw py::error_already_set();
}

void Check(const absl::Status& s) {
  if (!s.ok()) Raise(s);
}

// Runs `call` (which returns an absl::Status) with the GIL released, so that other Python
// threads run while it waits, and raises its error.
template <typename Call>
void WithoutGil(Call&& call) {
  absl::Status s;
  {
    py::gil_scoped_release release;
    s = call();
  }
  Check(s);
}

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

// The values to push: in place when the object already is C-contiguous float32, else
// converted; TypeError for what cannot be.
FloatArray Values(const py::object& values) {
  FloatArray v = FloatArray::ensure(values);  // no copy for a matching array
  if (!v) throw py::type_error("values must be an array of numbers (numpy, a CPU tensor, ...)");
  return v;
}

// A writable C-contiguous float32 array to pull into: a NumPy array, or an object whose
// __array__ shares its memory (a CPU torch tensor), or a clear error.
py::array_t<float> Target(const py::object& out) {
  py::object array = out;
  if (!py::isinstance<py::array>(out)) {
    if (!py::hasattr(out, "__array__")) {
      throw py::type_error("out must be a float32 numpy.ndarray or a CPU torch tensor");
    }
    array = py::module_::import("numpy").attr("asarray")(out);  // shares the memory
  }
  if (!py::isinstance<py::array_t<float>>(array)) {
    throw py::type_error("out must hold float32 values");
  }
  py::array_t<float> a = py::reinterpret_borrow<py::array_t<float>>(array);
  if (!(a.flags() & py::array::c_style)) throw py::value_error("out must be C-contiguous");
  if (!a.writeable()) throw py::value_error("out must be writable");
  return a;
}

std::optional<kairos::CallOptions> Deadline(std::optional<double> timeout_s) {
  if (!timeout_s) return std::nullopt;
  kairos::CallOptions o;
  o.deadline = absl::Now() + absl::Seconds(*timeout_s);
  return o;
}

// An asynchronous request and the arrays it reads or writes, kept alive until it is done.
class PyRequest {
 public:
  PyRequest(kairos::Request r, std::vector<py::object> keep)
      : r_(std::move(r)), keep_(std::move(keep)) {}
  PyRequest(PyRequest&& o) noexcept : r_(std::move(o.r_)), keep_(std::exchange(o.keep_, {})) {}
  PyRequest& operator=(PyRequest&&) = delete;
  // A request dropped before it is done is waited for, so that the arrays it reads or writes
  // outlive it.
  ~PyRequest() {
    if (keep_.empty() || r_.done()) return;
    py::gil_scoped_release release;
    (void)r_.Wait();
  }
  void Wait(std::optional<double> timeout_s) {
    absl::Status s;
    {
      py::gil_scoped_release release;
      s = timeout_s ? r_.WaitFor(absl::Seconds(*timeout_s)) : r_.Wait();
    }
    if (r_.done()) keep_.clear();
    Check(s);
  }
  bool done() const { return r_.done(); }

 private:
  kairos::Request r_;
  std::vector<py::object> keep_;
};

// A worker: one made from the environment (owned), or one of a LocalCluster's.
class PyWorker {
 public:
  PyWorker(std::unique_ptr<kairos::Worker> owned, py::object cluster = py::none())
      : owned_(std::move(owned)), w_(owned_.get()), cluster_(std::move(cluster)) {}
  PyWorker(kairos::Worker* w, py::object cluster) : w_(w), cluster_(std::move(cluster)) {}

  kairos::Worker& w() {
    if (w_ == nullptr) throw py::value_error("the worker was shut down");
    return *w_;
  }

  // A push, or with `assign` an assign, of `values` at `offset`.
  void Write(const std::string& table, const py::object& values, uint64_t offset,
             std::optional<double> timeout_s, bool assign) {
    FloatArray v = Values(values);
    const std::span<const float> span(v.data(), static_cast<size_t>(v.size()));
    const kairos::CallOptions options = Deadline(timeout_s).value_or(kairos::CallOptions{});
    kairos::Worker& worker = w();
    WithoutGil([&] {
      return assign ? worker.Assign(table, offset, span, options)
                    : worker.Push(table, offset, span, options);
    });
  }

  py::object Pull(const std::string& table, const py::object& out, uint64_t offset,
                  std::optional<uint64_t> length, std::optional<double> timeout_s) {
    py::array_t<float> target;
    if (out.is_none()) {
      uint64_t n = 0;
      if (length) {
        n = *length;
      } else {
        absl::StatusOr<kairos::TableInfo> info = w().table(table);
        if (!info.ok()) Raise(info.status());
        n = info->size - std::min(offset, info->size);
      }
      target = py::array_t<float>(static_cast<py::ssize_t>(n));
    } else {
      target = Target(out);
    }
    const std::span<float> span(target.mutable_data(), static_cast<size_t>(target.size()));
    const kairos::CallOptions options = Deadline(timeout_s).value_or(kairos::CallOptions{});
    kairos::Worker& worker = w();
    WithoutGil([&] { return worker.Pull(table, offset, span, options); });
    if (!out.is_none() && !py::isinstance<py::array>(out)) return out;  // the tensor given
    return target;
  }

  PyRequest PushAsync(const std::string& table, const py::object& values, uint64_t offset) {
    FloatArray v = Values(values);
    kairos::Request r = w().PushAsync(
        table, offset, std::span<const float>(v.data(), static_cast<size_t>(v.size())));
    return PyRequest(std::move(r), {v});
  }

  PyRequest PullAsync(const std::string& table, const py::object& out, uint64_t offset) {
    py::array_t<float> target = Target(out);
    kairos::Request r = w().PullAsync(
        table, offset, std::span<float>(target.mutable_data(), static_cast<size_t>(target.size())));
    return PyRequest(std::move(r), {target});
  }

  void PushSparse(const std::string& table, const py::object& keys, const py::object& rows) {
    auto k = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>::ensure(keys);
    if (!k) throw py::type_error("keys must be an array of integers");
    FloatArray v = Values(rows);
    kairos::Worker& worker = w();
    WithoutGil([&] {
      return worker.PushSparse(table,
                               std::span<const uint64_t>(k.data(), static_cast<size_t>(k.size())),
                               std::span<const float>(v.data(), static_cast<size_t>(v.size())));
    });
  }

  py::array_t<float> PullSparse(const std::string& table, const py::object& keys) {
    auto k = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>::ensure(keys);
    if (!k) throw py::type_error("keys: integers");
    absl::StatusOr<kairos::TableInfo> info = w().table(table);
    if (!info.ok()) Raise(info.status());
    py::array_t<float> rows(
        {static_cast<py::ssize_t>(k.size()), static_cast<py::ssize_t>(info->row_width)});
    kairos::Worker& worker = w();
    WithoutGil([&] {
      return worker.PullSparse(
          table, std::span<const uint64_t>(k.data(), static_cast<size_t>(k.size())),
          std::span<float>(rows.mutable_data(), static_cast<size_t>(rows.size())));
    });
    return rows;
  }

  // The benchmark's baseline (bench/python_cost.py): n blocking pulls of `length` values
  // (or pushes, when push is true) from C++, with the GIL released: the same calls as
  // pull()/push() without Python in the loop. Returns the seconds they took.
  double CppLoop(const std::string& table, uint64_t length, int64_t n, bool push) {
    std::vector<float> buffer(length, 0.0f);
    absl::Status s;
    double seconds = 0.0;
    {
      py::gil_scoped_release release;
      const absl::Time start = absl::Now();
      for (int64_t i = 0; i < n && s.ok(); ++i) {
        s = push ? w().Push(table, 0, std::span<const float>(buffer))
                 : w().Pull(table, 0, std::span<float>(buffer));
      }
      seconds = absl::ToDoubleSeconds(absl::Now() - start);
    }
    Check(s);
    return seconds;
  }

  void Clock() {
    kairos::Worker& worker = w();
    WithoutGil([&] { return worker.AdvanceClock(); });
  }

  void Barrier(std::optional<double> timeout_s) {
    const kairos::CallOptions options = Deadline(timeout_s).value_or(kairos::CallOptions{});
    kairos::Worker& worker = w();
    WithoutGil([&] { return worker.Barrier(options); });
  }

  void Shutdown() {
    if (owned_ == nullptr) return;  // a cluster's worker: the cluster shuts it down
    std::unique_ptr<kairos::Worker> worker = std::move(owned_);
    w_ = nullptr;
    WithoutGil([&] { return worker->Shutdown(); });
  }

 private:
  std::unique_ptr<kairos::Worker> owned_;
  kairos::Worker* w_ = nullptr;
  py::object cluster_;  // keeps a LocalCluster alive while its worker is used
};

kairos::Initializer InitializerOf(const py::object& init) {
  if (init.is_none()) return kairos::Initializer::Zeros();
  if (py::isinstance<py::float_>(init) || py::isinstance<py::int_>(init)) {
    return kairos::Initializer::Constant(init.cast<float>());
  }
  const auto t = init.cast<py::tuple>();
  const std::string kind = t[0].cast<std::string>();
  if (kind == "uniform" && t.size() == 4) {
    return kairos::Initializer::Uniform(t[1].cast<float>(), t[2].cast<float>(),
                                        t[3].cast<uint64_t>());
  }
  if (kind == "normal" && t.size() == 4) {
    return kairos::Initializer::Normal(t[1].cast<float>(), t[2].cast<float>(),
                                       t[3].cast<uint64_t>());
  }
  throw py::value_error(
      "init: None (zeros), a number, ('uniform', lo, hi, seed) or "
      "('normal', mean, stddev, seed)");
}

// A JobConfig from the Python description: tables as dicts (kairos.Table builds them).
kairos::JobConfig JobOf(const std::string& policy, const py::list& tables) {
  kairos::JobConfig job;
  job.policy = policy;
  for (const py::handle& h : tables) {
    const py::dict d = h.cast<py::dict>();
    kairos::TableSpec t;
    t.name = d["name"].cast<std::string>();
    const uint32_t row_width = d.contains("row_width") ? d["row_width"].cast<uint32_t>() : 0;
    if (row_width > 0) {
      t = kairos::TableSpec::Sparse(t.name, row_width);
    } else {
      t.size = d["size"].cast<uint64_t>();
    }
    t.init = InitializerOf(d.contains("init") ? py::object(d["init"]) : py::object(py::none()));
    t.updater.name = d.contains("updater") ? d["updater"].cast<std::string>() : "sgd";
    t.updater.learning_rate = d.contains("lr") ? d["lr"].cast<float>() : 0.01f;
    if (d.contains("policy") && !d["policy"].is_none()) t.policy = d["policy"].cast<std::string>();
    if (d.contains("schedule")) t.updater.schedule = d["schedule"].cast<std::string>();
    if (d.contains("compression")) {
      absl::StatusOr<kairos::Compression> c =
          kairos::ParseCompression(d["compression"].cast<std::string>());
      if (!c.ok()) Raise(c.status());
      t.compression = *c;
    }
    if (d.contains("merge_pushes")) t.merge_pushes = d["merge_pushes"].cast<bool>();
    if (d.contains("cache_clocks")) t.cache_clocks = d["cache_clocks"].cast<uint32_t>();
    if (d.contains("cache_rows")) t.cache_rows = d["cache_rows"].cast<uint64_t>();
    if (d.contains("write_back_clocks")) {
      t.write_back_clocks = d["write_back_clocks"].cast<uint32_t>();
    }
    job.tables.push_back(std::move(t));
  }
  Check(kairos::ValidateJobConfig(job));
  return job;
}

// A whole job in this process (kairos::LocalCluster).
class PyCluster {
 public:
  explicit PyCluster(std::unique_ptr<kairos::LocalCluster> c) : c_(std::move(c)) {}
  kairos::LocalCluster& c() {
    if (c_ == nullptr) throw py::value_error("the cluster was shut down");
    return *c_;
  }
  void Shutdown() {
    if (c_ == nullptr) return;
    WithoutGil([&] { return c_->Shutdown(); });
  }

 private:
  std::unique_ptr<kairos::LocalCluster> c_;
};

}  // namespace

PYBIND11_MODULE(_kairos, m) {
  m.doc() = "kairos: a parameter server with pluggable synchronization policies";
  g_error = PyErr_NewExceptionWithDoc(
      "kairos.Error", "A kairos call failed: .code is the status code's name, .message why.",
      PyExc_RuntimeError, nullptr);
  m.attr("Error") = py::handle(g_error);

  py::class_<PyRequest>(m, "Request")
      .def("wait", &PyRequest::Wait, py::arg("timeout") = py::none(),
           "Waits until the request completes (or `timeout` seconds pass) and raises "
           "kairos.Error if it failed.")
      .def("done", &PyRequest::done);

  py::class_<PyWorker>(m, "Worker")
      .def_static(
          "from_env",
          [](const std::string& policy, const py::list& tables) {
            kairos::WorkerOptions base;
            base.job = JobOf(policy, tables);
            absl::StatusOr<kairos::WorkerOptions> options =
                kairos::WorkerOptionsFromEnvironment(base);
            if (!options.ok()) Raise(options.status());
            absl::StatusOr<std::unique_ptr<kairos::Worker>> w;
            {
              py::gil_scoped_release release;
              w = kairos::Worker::Create(*options);
            }
            if (!w.ok()) Raise(w.status());
            return std::make_unique<PyWorker>(*std::move(w));
          },
          py::arg("policy"), py::arg("tables"))
      .def_property_readonly("rank", [](PyWorker& w) { return w.w().rank(); })
      .def_property_readonly("num_workers", [](PyWorker& w) { return w.w().num_workers(); })
      .def_property_readonly("num_servers", [](PyWorker& w) { return w.w().num_servers(); })
      .def_property_readonly("clock", [](PyWorker& w) { return w.w().clock(); })
      .def(
          "push",
          [](PyWorker& w, const std::string& table, const py::object& values, uint64_t offset,
             std::optional<double> timeout) { w.Write(table, values, offset, timeout, false); },
          py::arg("table"), py::arg("values"), py::arg("offset") = 0,
          py::arg("timeout") = py::none())
      .def(
          "assign",
          [](PyWorker& w, const std::string& table, const py::object& values, uint64_t offset,
             std::optional<double> timeout) { w.Write(table, values, offset, timeout, true); },
          py::arg("table"), py::arg("values"), py::arg("offset") = 0,
          py::arg("timeout") = py::none())
      .def("pull", &PyWorker::Pull, py::arg("table"), py::arg("out") = py::none(),
           py::arg("offset") = 0, py::arg("length") = py::none(), py::arg("timeout") = py::none())
      .def("push_async", &PyWorker::PushAsync, py::arg("table"), py::arg("values"),
           py::arg("offset") = 0)
      .def("pull_async", &PyWorker::PullAsync, py::arg("table"), py::arg("out"),
           py::arg("offset") = 0)
      .def("push_sparse", &PyWorker::PushSparse, py::arg("table"), py::arg("keys"), py::arg("rows"))
      .def("pull_sparse", &PyWorker::PullSparse, py::arg("table"), py::arg("keys"))
      .def("_cpp_loop", &PyWorker::CppLoop, py::arg("table"), py::arg("length"), py::arg("n"),
           py::arg("push") = false)
      .def("advance_clock", &PyWorker::Clock)
      .def("barrier", &PyWorker::Barrier, py::arg("timeout") = py::none())
      .def("shutdown", &PyWorker::Shutdown);

  py::class_<PyCluster>(m, "LocalCluster")
      .def(py::init([](int servers, int workers, const std::string& policy, const py::list& tables,
                       const std::string& transport) {
             kairos::ClusterOptions o;
             o.num_servers = servers;
             o.num_workers = workers;
             o.job = JobOf(policy, tables);
             absl::StatusOr<kairos::TransportKind> kind = kairos::ParseTransportKind(transport);
             if (!kind.ok()) Raise(kind.status());
             o.transport = *kind;
             absl::StatusOr<std::unique_ptr<kairos::LocalCluster>> c;
             {
               py::gil_scoped_release release;
               c = kairos::LocalCluster::Create(o);
             }
             if (!c.ok()) Raise(c.status());
             return std::make_unique<PyCluster>(*std::move(c));
           }),
           py::arg("servers"), py::arg("workers"), py::arg("policy"), py::arg("tables"),
           py::arg("transport") = "inproc")
      .def(
          "worker",
          [](py::object self, int rank) {
            PyCluster& c = self.cast<PyCluster&>();
            if (rank < 0 || rank >= c.c().num_workers()) throw py::index_error("no such rank");
            return std::make_unique<PyWorker>(&c.c().worker(rank), self);
          },
          py::arg("rank"))
      .def_property_readonly("num_workers", [](PyCluster& c) { return c.c().num_workers(); })
      .def("shutdown", &PyCluster::Shutdown);
}
