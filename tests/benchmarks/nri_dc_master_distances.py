"""What NRI-DC's master learns alone: the records' pairwise distances (plain script).

Run: ``python tests/benchmarks/nri_dc_master_distances.py [--seeds 5]``.

Pima as in the paper (13 workers x 50 samples, 100 test samples, standardised
features, OPP at dimension 6). Each worker's map ``F_i`` has orthonormal columns, so the
shared rows ``P_i X_i F_i`` the master receives keep the distances between the worker's
records projected on its principal subspace (see
:mod:`fedsec.attacks.nri_dc.pinv_reconstruction`). Prints, per seed, the relative error of
the distance matrix the master reads off the shared rows against the records' own
(``||D(shared) - D(X[rows])||_F / ||D(X)||_F``), per worker and its mean over workers.
"""

from __future__ import annotations

import argparse

import numpy as np

from fedsec.protocols.nri_dc import tags
from fedsec.runner import RunConfig, RunResult, run


def distances(Y: np.ndarray) -> np.ndarray:
    """The matrix of Euclidean distances between the rows of ``Y``."""
    return np.linalg.norm(Y[:, None] - Y[None], axis=-1)


def distance_gaps(result: RunResult) -> dict[str, float]:
    """Per worker, the master's distance matrix's relative error (rows in the shared order)."""
    out = {}
    for message in result.transcript.select(tag=tags.INTERMEDIATE):
        if message.receiver != "master":
            continue
        worker = message.sender
        X = result.private[f"party/{worker}/shard/cell0/X"]
        rows = result.private[f"party/{worker}/value/shared_rows"]
        gap = np.linalg.norm(distances(np.asarray(message.payload)) - distances(X[rows]))
        out[worker] = float(gap / np.linalg.norm(distances(X)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    means = []
    for seed in range(args.seeds):
        result = run(RunConfig(protocol="nri-dc", dataset="pima",
                               partition="horizontal:parties=13,size=50", test_size=0.1302,
                               scaling="standard", seed=seed, secret_seed=seed))
        gaps = distance_gaps(result)
        means.append(float(np.mean(list(gaps.values()))))
        shown = ", ".join(f"{w} {g:.1%}" for w, g in gaps.items())
        print(f"seed {seed}: mean {means[-1]:.1%} (range {min(gaps.values()):.1%}-"
              f"{max(gaps.values()):.1%}); {shown}")
    print(f"mean over seeds {np.mean(means):.1%} (per seed {min(means):.1%}-{max(means):.1%})")


if __name__ == "__main__":
    main()
