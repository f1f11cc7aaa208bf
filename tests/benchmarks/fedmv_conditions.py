"""H-FedMV's optimality conditions on real transcripts: a hyperparameter sweep identifies a
client's Gram matrix and class sums (plain script).

Run: ``python tests/benchmarks/fedmv_conditions.py [--dataset heart:views=artificial]``.

Each configuration ``(zeta, eta, beta)`` is one ``h-fedmv`` run (two clients, one round, the
local loop run to a tight tolerance, as the paper tunes zeta and eta by rerunning). The server
reads party1's local weights from its contribution (``plain``, the paper's setting), stacks the
optimality conditions (:mod:`fedsec.attacks.fedmv.conditions`) and prints the stacked rank
against the number of configurations, and the relative errors of the recovered ``G = X^T X``
and ``B = X^T Y`` (the per-class column sums: class-conditional means once divided by the
class counts) against party1's true data; then ``B`` from the first run alone with ``G`` as a
prior.
"""

from __future__ import annotations

import argparse

import numpy as np

from fedsec.attacks.fedmv import conditions as cd
from fedsec.private_store import shard_key
from fedsec.protocols.fedmv import maths, tags
from fedsec.runner import RunConfig, run
from fedsec.views import build_view

CONFIGS = [(1.0, 1.0, 4.0), (2.0, 1.0, 4.0), (1.0, 4.0, 4.0), (4.0, 2.0, 1.0), (0.5, 8.0, 2.0),
           (8.0, 0.5, 3.0), (2.0, 2.0, 6.0), (3.0, 5.0, 0.5), (6.0, 1.0, 2.0), (1.0, 3.0, 8.0)]
TIGHT = {"tol": 1e-13, "max_rounds": 20000, "inner_tol": 1e-13, "max_inner": 2000, "rounds": 1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default="heart:views=artificial")
    parser.add_argument("--configs", type=int, default=len(CONFIGS))
    args = parser.parse_args()
    systems = []
    G = B = None
    print(f"{args.dataset}, h-fedmv with two clients; the server attacks party1")
    for zeta, eta, beta in CONFIGS[:args.configs]:
        result = run(RunConfig(protocol="h-fedmv", dataset=args.dataset,
                               partition="horizontal:parties=2", reference=False,
                               params={**TIGHT, "zeta": zeta, "eta": eta, "beta": beta}))
        view = build_view(result.transcript, "server", result.private)
        message = view.select(tag=tags.LOCAL_WEIGHTS, sender="party1", round=1)[0]
        vector = np.asarray(view.open(message), dtype=np.float64)
        shapes = [tuple(s) for s in message.meta[tags.SHAPES]]
        flat, Ws, start = vector[1:] / vector[0], [], 0
        for rows, cols in shapes:
            Ws.append(flat[start:start + rows * cols].reshape(rows, cols))
            start += rows * cols
        systems.append(cd.conditions(Ws, beta=beta, zeta=zeta, eta=eta, eps=1e-8))
        if G is None:  # the ground truth, for scoring only
            X = np.asarray(result.private[shard_key("party1", 0, "X")])
            y = np.asarray(result.private[shard_key("party1", 0, "y")])
            G, B = X.T @ X, X.T @ maths.one_hot(y, Ws[0].shape[1])
        G_hat, B_hat = cd.solve(systems)
        print(f"  {len(systems):2d} configuration(s) (zeta {zeta}, eta {eta}, beta {beta}): rank "
              f"{cd.stacked_rank(systems)} of {cd.n_unknowns(*B.shape)}; relative error G "
              f"{np.linalg.norm(G_hat - G) / np.linalg.norm(G):.1e}, B "
              f"{np.linalg.norm(B_hat - B) / np.linalg.norm(B):.1e}")
    assert G is not None and B is not None
    prior = cd.class_sums_given_gram(systems[0], G)
    print(f"  one run with G as a prior: B to {np.linalg.norm(prior - B) / np.linalg.norm(B):.1e}")


if __name__ == "__main__":
    main()
