#!/usr/bin/env python3
# Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
"""The cost of the Python path (docs/pytorch.md): blocking pulls and pushes of 4 KiB
(requests per second) and 1 MiB (MB/s) from a Python loop, against the same calls from a
C++ loop in the same process, on the same cluster, in the same run (Worker._cpp_loop, the
GIL released). One server, one worker, tcp loopback.

    PYTHONPATH=build/python python3 bench/python_cost.py [--seconds 2]
"""

import argparse
import time

import numpy as np

import kairos


def python_loop(w, op, values, seconds):
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        if op == "pull":
            w.pull("t", out=values)
        else:
            w.push("t", values)
        n += 1
    return n, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per measurement")
    args = parser.parse_args()
    print("%-6s %-8s %14s %14s %8s" % ("op", "size", "python", "c++", "python/c++"))
    for size in (4 << 10, 1 << 20):
        floats = size // 4
        c = kairos.LocalCluster(servers=1, workers=1, policy="asp", transport="tcp",
                                tables=[kairos.Table("t", floats, lr=0.0)])
        w = c.worker(0)
        values = np.zeros(floats, dtype=np.float32)
        for op in ("pull", "push"):
            python_loop(w, op, values, 0.2)  # warm-up
            n, py_s = python_loop(w, op, values, args.seconds)
            cpp_s = w._cpp_loop("t", floats, n, push=(op == "push"))
            if size < (1 << 20):
                unit, py_rate, cpp_rate = "req/s", n / py_s, n / cpp_s
            else:
                unit, py_rate, cpp_rate = "MB/s", n * size / py_s / 1e6, n * size / cpp_s / 1e6
            print("%-6s %-8s %8.0f %-5s %8.0f %-5s %8.2f" % (
                op, "%d KiB" % (size >> 10), py_rate, unit, cpp_rate, unit, py_rate / cpp_rate))
        c.shutdown()


if __name__ == "__main__":
    main()
