# Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
"""One worker of a two-process job under kairos-launch (tests/python/test_kairos.py): BSP,
each worker pushes (rank + 1) * i for three clocks; every read is checked exactly."""

import numpy as np

import kairos

w = kairos.init_from_env("bsp", [kairos.Table("w", 8, init=1.0, lr=0.5)])
g = np.arange(8, dtype=np.float32) * (w.rank + 1)
for clock in range(1, 4):
    w.push("w", g)
    w.advance_clock()
    got = w.pull("w")
    # The mean of i and 2i is 1.5i each clock: 1 - 0.75i per clock at lr 0.5.
    expected = 1.0 - 0.75 * clock * np.arange(8, dtype=np.float32)
    assert np.array_equal(got, expected), (w.rank, clock, got, expected)
print("rank %d ok" % w.rank, flush=True)
w.shutdown()
