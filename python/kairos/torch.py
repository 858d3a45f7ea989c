# Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
"""PyTorch through kairos (docs/pytorch.md): a module's parameters in a table, pulled into
the parameters' own memory and their gradients pushed from theirs (CPU float32 tensors,
no copy), and the training step of kairos/torch.h's TorchTrainer.

    layout = kairos.torch.Layout(model)
    worker = kairos.init_from_env("asp", layout.tables(updater="adam", lr=1e-3))
    trainer = kairos.torch.Trainer(worker, layout, model)
    trainer.init()
    for x, y in batches:
        trainer.step(lambda: F.nll_loss(model(x), y).backward())
"""

import torch

from . import Table


def _flat(t):
    """The tensor's memory as a flat numpy array (shared, no copy; the array keeps the
    tensor alive)."""
    if t.dtype != torch.float32 or t.device.type != "cpu" or not t.is_contiguous():
        raise TypeError("kairos moves contiguous float32 CPU tensors, not a %s tensor on %s"
                        % (t.dtype, t.device))
    return t.detach().numpy().reshape(-1)


class Layout:
    """Each parameter of `module` (named_parameters(), in order) a range of one table."""

    def __init__(self, module, table="model"):
        self.table = table
        self.entries = []  # (name, offset, numel)
        offset = 0
        for name, p in module.named_parameters():
            self.entries.append((name, offset, p.numel()))
            offset += p.numel()
        self.size = offset

    def tables(self, updater="sgd", lr=0.01):
        """The job's table declaration, zeros first (Trainer.init writes rank 0's values)."""
        return [Table(self.table, self.size, None, updater, lr)]

    def _check(self, module):
        named = list(module.named_parameters())
        if [(n, p.numel()) for n, p in named] != [(n, k) for n, _, k in self.entries]:
            raise ValueError("the module is not the layout's: build the layout from the "
                             "same module")
        return [p for _, p in named]

    def pull_parameters(self, worker, module):
        """Writes every parameter in place with the servers' values (pulls in flight
        together)."""
        params = self._check(module)
        requests = [worker.pull_async(self.table, _flat(p.data), offset)
                    for p, (_, offset, _) in zip(params, self.entries)]
        for r in requests:
            r.wait()

    def push_gradients(self, worker, module):
        """Pushes every parameter's .grad (none: nothing for that parameter)."""
        params = self._check(module)
        requests = [worker.push_async(self.table, _flat(p.grad.contiguous()), offset)
                    for p, (_, offset, _) in zip(params, self.entries) if p.grad is not None]
        for r in requests:
            r.wait()

    def assign_parameters(self, worker, module):
        """Writes the module's values to the servers (rank 0's initial values)."""
        params = self._check(module)
        for p, (_, offset, _) in zip(params, self.entries):
            worker.assign(self.table, _flat(p.data), offset)


class Trainer:
    """The kairos part of a training loop (kairos/torch.h's TorchTrainer): init() gives
    every worker rank 0's initial parameters; step(fn) pulls, zeroes the gradients, runs
    fn (forward and backward), pushes the gradients and advances the clock.

    mode="server" (default): the servers' optimizer (the table's updater) updates the
    parameters. mode="worker": fn also steps the program's own torch.optim optimizer, and
    what is pushed is the change it made (parameters after - parameters pulled), which the
    servers add: declare the table with updater="add"."""

    def __init__(self, worker, layout, module, mode="server"):
        if mode not in ("server", "worker"):
            raise ValueError("mode: 'server' or 'worker', not %r" % (mode,))
        self.worker, self.layout, self.module, self.mode = worker, layout, module, mode

    def init(self):
        if self.worker.rank == 0:
            self.layout.assign_parameters(self.worker, self.module)
        self.worker.barrier()
        self.layout.pull_parameters(self.worker, self.module)

    def step(self, forward_backward):
        self.layout.pull_parameters(self.worker, self.module)
        pulled = ([p.detach().clone() for p in self.module.parameters()]
                  if self.mode == "worker" else None)
        self.module.zero_grad(set_to_none=True)
        forward_backward()
        if pulled is None:
            self.layout.push_gradients(self.worker, self.module)
        else:
            params = self.layout._check(self.module)
            changes = [(p.detach() - q).contiguous() for p, q in zip(params, pulled)]
            requests = [self.worker.push_async(self.layout.table, _flat(c), offset)
                        for c, (_, offset, _) in zip(changes, self.layout.entries)]
            for r in requests:
                r.wait()
        self.worker.advance_clock()
