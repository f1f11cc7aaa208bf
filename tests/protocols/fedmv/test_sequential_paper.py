"""S-FedMV at a larger scale than the default suite's (``--run-slow``): Table 3's ordering on
the keystroke generator's default federation (8 participants, 60 sessions of 10-100 key
presses each) over three seeds, with 50 FedAvg rounds of 2 RMSProp epochs (the paper trains
150-170 rounds on far more sessions per client).

    python -m pytest -q --run-slow -s tests/protocols/fedmv/test_sequential_paper.py
"""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.plan import RunConfig
from fedsec.runner import run

pytest.importorskip("torch")


@pytest.mark.slow
def test_table3_ordering_over_seeds() -> None:
    rows = []
    for seed in (0, 1, 2):
        result = run(RunConfig(protocol="s-fedmv", seed=seed, params={"fedavg_rounds": 50}))
        federated = result.record.federated_metrics
        rows.append((federated["accuracy"], result.record.centralized_metrics["accuracy"],
                     federated["local_hfedmv_accuracy"], federated["local_mvl_accuracy"]))
        print(f"seed {seed}: S-FedMV {rows[-1][0]:.3f}  centralized {rows[-1][1]:.3f}  "
              f"local extractors + H-FedMV {rows[-1][2]:.3f}  local MVL {rows[-1][3]:.3f}")
    s_fedmv, central, local_h, local_mvl = np.mean(rows, axis=0)
    print(f"mean: S-FedMV {s_fedmv:.3f}  centralized {central:.3f}  "
          f"local extractors + H-FedMV {local_h:.3f}  local MVL {local_mvl:.3f}")
    assert s_fedmv > local_h + 0.03 and s_fedmv > local_mvl + 0.03
    assert s_fedmv > central - 0.1
