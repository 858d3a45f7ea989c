# Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
"""kairos: a parameter server with pluggable synchronization policies (docs/pytorch.md).

    import kairos
    tables = [kairos.Table("w", 1000, updater="sgd", lr=0.1)]
    worker = kairos.init_from_env("ssp:s=3", tables)   # under kairos-launch
    w = worker.pull("w")                               # a numpy float32 array
    worker.push("w", grad)
    worker.advance_clock()

Without a launcher, kairos.LocalCluster runs a whole job in the process, and
kairos.run(cluster, fn) calls fn(worker) for every worker, each on its own thread.
"""

import threading

from ._kairos import Error, LocalCluster, Request, Worker

__all__ = ["Error", "LocalCluster", "Request", "Worker", "Table", "SparseTable",
           "init_from_env", "run"]


def Table(name, size, init=None, updater="sgd", lr=0.01, policy=None, **options):
    """A dense table: `size` float32 values (kairos::TableSpec). `init`: None (zeros), a
    number (a constant), ("uniform", lo, hi, seed) or ("normal", mean, stddev, seed).
    `updater` ("adam:beta1=0.8", ...) and `lr`: the servers' optimizer (docs/optimizers.md).
    `policy`: this table's own policy spec, when it differs from the job's
    (docs/policies.md). `options`: schedule ("cosine:steps=1000"), compression ("fp16",
    "bf16", "int8"), merge_pushes (bool), cache_clocks (int), write_back_clocks (int), and
    for a sparse table cache_rows (int) (docs/configuration.md)."""
    known = {"schedule", "compression", "merge_pushes", "cache_clocks", "cache_rows",
             "write_back_clocks"}
    unknown = set(options) - known
    if unknown:
        raise TypeError("Table: unknown option(s) %s (known: %s)"
                        % (", ".join(sorted(unknown)), ", ".join(sorted(known))))
    return dict({"name": name, "size": int(size), "init": init, "updater": updater,
                 "lr": float(lr), "policy": policy}, **options)


def SparseTable(name, row_width, init=None, updater="sgd", lr=0.01, policy=None, **options):
    """A sparse table: rows of `row_width` float32 values by 64-bit key (docs/sparse.md);
    the other arguments as Table's."""
    table = Table(name, 0, init, updater, lr, policy, **options)
    del table["size"]
    table["row_width"] = int(row_width)
    return table


def init_from_env(policy, tables):
    """The worker of this process, from the variables kairos-launch sets for it
    (KAIROS_COORDINATOR, KAIROS_RANK; docs/launching.md), or that a program started by hand
    sets. Every worker of a job gives the same policy and tables."""
    return Worker.from_env(policy, tables)


def run(cluster, fn):
    """Calls fn(worker) for every worker of `cluster`, each on its own thread, and raises
    the first exception any of them raised (after all have returned)."""
    errors = [None] * cluster.num_workers

    def body(rank):
        try:
            fn(cluster.worker(rank))
        except BaseException as e:  # re-raised below, on the caller's thread
            errors[rank] = e

    threads = [threading.Thread(target=body, args=(r,)) for r in range(cluster.num_workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        if e is not None:
            raise e
