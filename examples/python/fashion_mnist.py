#!/usr/bin/env python3
# Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
"""A PyTorch CNN on Fashion-MNIST trained through kairos (docs/pytorch.md): the network of
examples/torch_fashion_mnist.cc, its parameters in one table updated by the servers'
optimizer, each worker on its shard under any policy (kairos.torch.Trainer).

    kairos-launch -s 2 -w 4 -- python3 examples/python/fashion_mnist.py --policy ssp:s=3
    python3 examples/python/fashion_mnist.py --workers 2     # one process, a thread per worker

The module comes from the build tree (PYTHONPATH=build/python) or an install. Rank 0
evaluates the servers' parameters on the test set after its last epoch; the last line is
`final test accuracy 0.XXXX`.
"""

import argparse
import gzip
import os
import struct
import time

import numpy as np
import torch
import torch.nn.functional as F

import kairos
import kairos.torch as kt

DATA_DIR = "/usr/share/datasets/fashion-mnist"  # Debian's dataset-fashion-mnist


def read_idx(path, count):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, n = struct.unpack(">II", data[:8])
    dims = magic & 0xFF
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    values = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)
    return values[:count] if count >= 0 else values


def load(data_dir, max_train, max_test):
    def images(name, count):
        return read_idx(os.path.join(data_dir, name), count).astype(np.float32)

    def labels(name, count):
        return read_idx(os.path.join(data_dir, name), count).astype(np.int64)

    x_train = images("train-images-idx3-ubyte.gz", max_train)
    mean, std = x_train.mean(), x_train.std()  # standardized as the C++ loader does
    x_test = images("t10k-images-idx3-ubyte.gz", max_test)
    as_tensor = lambda x: torch.from_numpy((x - mean) / std).unsqueeze(1)  # N x 1 x 28 x 28
    return (as_tensor(x_train), torch.from_numpy(labels("train-labels-idx1-ubyte.gz", max_train)),
            as_tensor(x_test), torch.from_numpy(labels("t10k-labels-idx1-ubyte.gz", max_test)))


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, 5, padding=2)
        self.conv2 = torch.nn.Conv2d(16, 32, 5, padding=2)
        self.fc = torch.nn.Linear(32 * 7 * 7, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return F.log_softmax(self.fc(x.flatten(1)), dim=1)


def accuracy(model, x, y):
    with torch.no_grad():
        predicted = torch.cat([model(x[i:i + 1000]).argmax(1) for i in range(0, len(x), 1000)])
    return (predicted == y).float().mean().item()


def train(worker, args, data, layout, report):
    torch.set_num_threads(1)  # the workers share the machine's cores
    torch.manual_seed(args.seed)
    model = Cnn()
    trainer = kt.Trainer(worker, layout, model)
    trainer.init()
    x_train, y_train, x_test, y_test = data
    order = np.random.default_rng(args.seed).permutation(len(x_train))
    shard = torch.from_numpy(order[worker.rank::worker.num_workers].copy())
    for epoch in range(args.epochs):
        for b in range(len(shard) // args.batch):
            idx = shard[b * args.batch:(b + 1) * args.batch]
            x, y = x_train[idx], y_train[idx]
            trainer.step(lambda: F.nll_loss(model(x), y).backward())
        if worker.rank == 0:
            report("epoch %d  wall %.1f s" % (epoch + 1, time.time() - args.start))
    worker.barrier()  # everyone's last push is in
    if worker.rank == 0:
        layout.pull_parameters(worker, model)
        report("final test accuracy %.4f" % accuracy(model, x_test, y_test))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--policy", default="asp", help="synchronization policy (docs/policies.md)")
    p.add_argument("--workers", type=int, default=4, help="workers (one process only)")
    p.add_argument("--servers", type=int, default=2, help="servers (one process only)")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.0005)
    p.add_argument("--optimizer", default="adam", help="the servers' updater")
    p.add_argument("--max-train", type=int, default=-1)
    p.add_argument("--max-test", type=int, default=-1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--data-dir", default=DATA_DIR)
    args = p.parse_args()
    args.start = time.time()
    data = load(args.data_dir, args.max_train, args.max_test)
    torch.manual_seed(args.seed)
    layout = kt.Layout(Cnn())
    tables = layout.tables(updater=args.optimizer, lr=args.lr)
    report = lambda line: print(line, flush=True)
    if "KAIROS_COORDINATOR" in os.environ:  # a process of kairos-launch
        worker = kairos.init_from_env(args.policy, tables)
        if worker.rank == 0:
            report("kairos + PyTorch: CNN (%d parameters), policy %s, %d workers"
                   % (layout.size, args.policy, worker.num_workers))
        train(worker, args, data, layout, report)
        worker.shutdown()
    else:
        report("kairos + PyTorch: CNN (%d parameters), policy %s, %d workers"
               % (layout.size, args.policy, args.workers))
        cluster = kairos.LocalCluster(servers=args.servers, workers=args.workers,
                                      policy=args.policy, tables=tables)
        kairos.run(cluster, lambda w: train(w, args, data, layout, report))
        cluster.shutdown()


if __name__ == "__main__":
    main()
