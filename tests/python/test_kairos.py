# Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
"""The Python module (python/kairos): exact values through whole clusters, errors raised as
kairos.Error with the status code, pulls written in place (NumPy arrays and torch tensors),
async requests, sparse rows, kairos.torch against torch.optim.SGD, and a two-process job
under kairos-launch. Run by CTest (python.pytest) with PYTHONPATH at build/python."""

import os
import subprocess
import sys

import numpy as np
import pytest

import kairos


def cluster(workers, policy, size=6, init=1.0, lr=0.5, servers=2):
    return kairos.LocalCluster(servers=servers, workers=workers, policy=policy,
                               tables=[kairos.Table("w", size, init=init, lr=lr)])


def test_bsp_averages_the_workers_gradients_exactly():
    c = cluster(2, "bsp")
    seen = {}

    def fn(w):
        w.push("w", np.arange(6, dtype=np.float32) * (w.rank + 1))
        w.advance_clock()
        seen[w.rank] = w.pull("w")

    kairos.run(c, fn)
    # The mean of i and 2i is 1.5i; sgd at 0.5 from 1: 1 - 0.75i, exact in float32.
    expected = 1.0 - 0.75 * np.arange(6, dtype=np.float32)
    for rank in (0, 1):
        np.testing.assert_array_equal(seen[rank], expected)
    c.shutdown()


def test_asp_applies_each_push_as_it_comes():
    c = cluster(1, "asp")
    w = c.worker(0)
    w.push("w", np.ones(6, dtype=np.float32))
    w.push("w", np.full(6, 2.0))  # float64: converted, not refused
    np.testing.assert_array_equal(w.pull("w"), np.full(6, 1.0 - 0.5 - 1.0, dtype=np.float32))
    np.testing.assert_array_equal(w.pull("w", offset=4), np.full(2, -0.5, dtype=np.float32))
    c.shutdown()


def test_errors_are_kairos_errors_with_the_status_code():
    c = cluster(1, "asp")
    w = c.worker(0)
    with pytest.raises(kairos.Error) as e:
        w.pull("nope")
    assert e.value.code == "NOT_FOUND" and "nope" in e.value.message
    with pytest.raises(kairos.Error) as e:
        w.push("w", np.ones(7, dtype=np.float32))  # the table holds 6
    assert e.value.code == "INVALID_ARGUMENT"
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(TypeError):
        w.push("w", "not numbers")
    with pytest.raises(TypeError):
        w.push_async("w", object())
    np.testing.assert_array_equal(w.pull("w"), np.ones(6, dtype=np.float32))  # unchanged
    c.shutdown()
    with pytest.raises(kairos.Error) as e:
        kairos.LocalCluster(servers=1, workers=1, policy="no-such-policy",
                            tables=[kairos.Table("w", 4)])
    assert e.value.code == "INVALID_ARGUMENT"


def test_pulls_write_in_place_and_async_requests_wait():
    c = cluster(1, "asp")
    w = c.worker(0)
    out = np.zeros(6, dtype=np.float32)
    got = w.pull("w", out=out)
    assert np.shares_memory(got, out)
    np.testing.assert_array_equal(out, np.ones(6, dtype=np.float32))
    with pytest.raises(TypeError):
        w.pull("w", out=np.zeros(6))  # float64 cannot be written in place
    r = w.push_async("w", np.ones(6, dtype=np.float32))
    r.wait()
    assert r.done()
    half = np.zeros(3, dtype=np.float32)
    w.pull_async("w", half, offset=3).wait()
    np.testing.assert_array_equal(half, np.full(3, 0.5, dtype=np.float32))
    bad = w.pull_async("nope", half)
    with pytest.raises(kairos.Error):
        bad.wait()
    # A request dropped without a wait is waited for as it goes: its array stays valid.
    w.push_async("w", np.full(6, 2.0, dtype=np.float32))
    np.testing.assert_array_equal(w.pull("w"), np.full(6, -0.5, dtype=np.float32))
    c.shutdown()


def test_sparse_rows_by_key():
    c = kairos.LocalCluster(servers=2, workers=1, policy="asp",
                            tables=[kairos.SparseTable("emb", 4, init=0.0, lr=1.0)])
    w = c.worker(0)
    keys = np.array([7, 1 << 40], dtype=np.uint64)
    w.push_sparse("emb", keys, np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.float32))
    rows = w.pull_sparse("emb", keys[::-1].copy())
    np.testing.assert_array_equal(rows, -np.array([[5, 6, 7, 8], [1, 2, 3, 4]], dtype=np.float32))
    c.shutdown()


def test_torch_trainer_follows_torch_sgd():
    torch = pytest.importorskip("torch")
    import kairos.torch as kt

    torch.manual_seed(5)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    reference = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    reference.load_state_dict(model.state_dict())
    layout = kt.Layout(model)
    c = kairos.LocalCluster(servers=2, workers=1, policy="asp",
                            tables=layout.tables(updater="sgd", lr=0.1))
    w = c.worker(0)
    trainer = kt.Trainer(w, layout, model)
    trainer.init()
    storage = [p.data_ptr() for p in model.parameters()]
    sgd = torch.optim.SGD(reference.parameters(), lr=0.1)
    for _ in range(5):
        x, y = torch.randn(5, 3), torch.randn(5, 2)
        trainer.step(lambda: torch.nn.functional.mse_loss(model(x), y).backward())
        sgd.zero_grad()
        torch.nn.functional.mse_loss(reference(x), y).backward()
        sgd.step()
    layout.pull_parameters(w, model)
    assert [p.data_ptr() for p in model.parameters()] == storage  # pulled in place
    for p, q in zip(model.parameters(), reference.parameters()):
        assert torch.allclose(p, q, rtol=0, atol=1e-6), (p - q).abs().max()
    c.shutdown()


def test_two_processes_under_kairos_launch():
    launch = os.environ.get("KAIROS_LAUNCH")
    if not launch:
        pytest.skip("KAIROS_LAUNCH (the kairos-launch program) is not set")
    script = os.path.join(os.path.dirname(__file__), "launched_worker.py")
    done = subprocess.run([launch, "-s", "1", "-w", "2", "--timeout", "60", "--",
                           sys.executable, script], capture_output=True, text=True, timeout=120)
    print(done.stdout, done.stderr)
    assert done.returncode == 0
    assert "rank 0 ok" in done.stdout and "rank 1 ok" in done.stdout


def test_torch_tensors_in_place_and_the_worker_optimizer_mode():
    torch = pytest.importorskip("torch")
    import kairos.torch as kt

    c = cluster(1, "asp")
    w = c.worker(0)
    t = torch.zeros(6)
    assert w.pull("w", out=t) is t  # written into the tensor's own memory
    assert torch.equal(t, torch.ones(6))
    w.push("w", torch.ones(6))  # read through __array__, no copy
    assert torch.equal(w.pull("w", out=t), torch.full((6,), 0.5))
    with pytest.raises(TypeError):
        w.pull("w", out=torch.zeros(6, dtype=torch.float64))
    c.shutdown()

    # One worker whose torch.optim.SGD with momentum steps locally; the servers add the
    # change: their parameters follow the optimizer alone.
    torch.manual_seed(3)
    model = torch.nn.Linear(3, 2)
    reference = torch.nn.Linear(3, 2)
    reference.load_state_dict(model.state_dict())
    layout = kt.Layout(model)
    c = kairos.LocalCluster(servers=2, workers=1, policy="asp",
                            tables=layout.tables(updater="add", lr=1.0))
    w = c.worker(0)
    trainer = kt.Trainer(w, layout, model, mode="worker")
    trainer.init()
    local = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    alone = torch.optim.SGD(reference.parameters(), lr=0.05, momentum=0.9)

    def local_step(x, y):
        torch.nn.functional.mse_loss(model(x), y).backward()
        local.step()

    for _ in range(6):
        x, y = torch.randn(5, 3), torch.randn(5, 2)
        trainer.step(lambda: local_step(x, y))
        alone.zero_grad()
        torch.nn.functional.mse_loss(reference(x), y).backward()
        alone.step()
    pulled = torch.nn.Linear(3, 2)
    layout.pull_parameters(w, pulled)
    for p, q in zip(pulled.parameters(), reference.parameters()):
        assert torch.allclose(p, q, rtol=0, atol=1e-5), (p - q).abs().max()
    with pytest.raises(ValueError):
        kt.Trainer(w, layout, model, mode="both")
    c.shutdown()


def test_tables_take_the_options_of_a_table_spec():
    c = kairos.LocalCluster(servers=1, workers=1, policy="asp", tables=[
        kairos.Table("w", 4, init=1.0, lr=0.5, schedule="step:every=1,gamma=0.5",
                     compression="none", merge_pushes=True, cache_clocks=0)])
    w = c.worker(0)
    w.push("w", np.ones(4, dtype=np.float32))  # clock 0: the full rate
    np.testing.assert_array_equal(w.pull("w"), np.full(4, 0.5, dtype=np.float32))
    c.shutdown()
    with pytest.raises(TypeError):
        kairos.Table("w", 4, compresion="fp16")  # misspelt: refused, not ignored
    with pytest.raises(kairos.Error) as e:
        kairos.LocalCluster(servers=1, workers=1, policy="asp",
                            tables=[kairos.Table("w", 4, compression="fp12")])
    assert e.value.code == "INVALID_ARGUMENT"
