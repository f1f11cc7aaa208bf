"""Time of one gradient-matching step on a small bidirectional GRU (a plain script).

Run: ``python tests/benchmarks/inversion_step.py [--repeats 50] [--batch 8] [--steps 50]``.
The model: a bidirectional GRU (4 channels, hidden 16 per direction) and a linear head on the
final states (5 classes); the batch: 8 sequences of 50 steps. One step is what every
evaluation of the inversion objective costs: the forward pass on the dummy batch, the
parameter gradient with its graph kept (``create_graph``), the distance to the observed
gradient, and the backward pass to the dummy inputs and soft labels. Printed for DLG's L2
distance and Inverting Gradients' cosine, and for one FedAvg objective (a simulated local
epoch of one full-batch SGD step, then the update distance); median and quartiles of
``--repeats`` timed runs after 3 warm-up runs, one thread (as
:func:`fedsec.nn.deterministic` sets). An L-BFGS step of DLG evaluates the objective up to
about 25 times (20 iterations and their line searches), an Adam step once.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from statistics import median, quantiles

import numpy as np

from fedsec.attacks.inversion.fedavg import LocalTraining, simulate
from fedsec.attacks.inversion.maths import (
    batch_gradient,
    call,
    distance,
    fixed_parameters,
    soft_cross_entropy,
)
from fedsec.nn import deterministic, require_torch


def model(channels: int, hidden: int, classes: int, seed: int):
    torch = require_torch("the benchmark")

    class BiGRU(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gru = torch.nn.GRU(channels, hidden, batch_first=True, bidirectional=True)
            self.head = torch.nn.Linear(2 * hidden, classes)

        def forward(self, x):
            _, h = self.gru(x)
            return self.head(torch.cat([h[0], h[1]], dim=1))

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return BiGRU()


def timed(step: Callable[[], None], repeats: int) -> tuple[float, float, float]:
    """Median and quartiles of ``repeats`` runs of ``step``, in ms."""
    for _ in range(3):
        step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(1000 * (time.perf_counter() - start))
    q1, _, q3 = quantiles(times, n=4)
    return median(times), q1, q3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=50, help="sequence length T")
    parser.add_argument("--channels", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=16)
    args = parser.parse_args()
    torch = require_torch("the benchmark")
    classes, n, T, c = 5, args.batch, args.steps, args.channels
    rng = np.random.default_rng(0)
    net = model(c, args.hidden, classes, seed=0)
    observed = batch_gradient(net, rng.standard_normal((n, T, c)), rng.integers(0, classes, n))
    with deterministic(0) as generator:
        params, buffers = fixed_parameters(net)
        target = [torch.as_tensor(observed[k]) for k in params]
        x = torch.randn((n, T, c), generator=generator, requires_grad=True)
        labels = torch.randn((n, classes), generator=generator, requires_grad=True)

        def gradient_step(method: str) -> Callable[[], None]:
            def step() -> None:
                x.grad = labels.grad = None
                loss = soft_cross_entropy(call(net, params, buffers, x),
                                          torch.softmax(labels, -1))
                grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
                distance(list(grads), target, method).backward()
            return step

        local = LocalTraining(epochs=1, batch_size=n, lr=0.1)

        def fedavg_step() -> None:
            x.grad = labels.grad = None
            end = simulate(net, params, buffers, x, torch.softmax(labels, -1), local)
            update = [end[k] - params[k] for k in params]
            distance(update, target, "ig").backward()

        print(f"bidirectional GRU, hidden {args.hidden}, T={T}, c={c}, batch {n}, "
              f"{sum(p.numel() for p in params.values())} parameters, "
              f"{torch.get_num_threads()} thread(s), torch {torch.__version__}")
        for name, step in (("DLG objective (L2) forward+backward", gradient_step("dlg")),
                           ("IG objective (cosine) forward+backward", gradient_step("ig")),
                           ("FedAvg objective, 1 SGD step", fedavg_step)):
            mid, q1, q3 = timed(step, args.repeats)
            print(f"{name}: {mid:.1f} ms (quartiles {q1:.1f}-{q3:.1f}, {args.repeats} runs)")


if __name__ == "__main__":
    main()
