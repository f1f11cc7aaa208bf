"""An audit gives each cell's attacks the cell's public seed (the View's ``run_seed``), from
which an attack's own random stream derives."""

from __future__ import annotations

import textwrap
from pathlib import Path

from fedsec.audit import load_spec, run_audit

SEED_ECHO = '''
from dataclasses import replace

from fedsec.attacks.contribution_readout import ContributionReadout


class SeedEcho(ContributionReadout):
    """contribution-readout that also reports the seed it would start from."""

    def run(self, view):
        out = super().run(view)
        return replace(out, info={**out.info, "run_seed": view.run_seed,
                                  "seed_for": self.seed_for(view)})
'''

SCENARIO = """
[audit]
name = "run-seed"
protocols = ["secure-sum"]
dataset = "iris"
seeds = [0, 3]
secret_seed = 1

[[attacks]]
name = "seed_echo:SeedEcho"
as = ["aggregator"]
"""


def test_each_cell_attacks_with_its_own_seed(tmp_path: Path) -> None:
    (tmp_path / "seed_echo.py").write_text(textwrap.dedent(SEED_ECHO))
    path = tmp_path / "run-seed.toml"
    path.write_text(textwrap.dedent(SCENARIO))
    cells = run_audit(load_spec(path), tmp_path / "out")
    seen = {c["config"]["seed"]: c["attacks"][0]["info"] for c in cells}  # type: ignore[index]
    assert seen == {0: {**seen[0], "run_seed": 0, "seed_for": 0},
                    3: {**seen[3], "run_seed": 3, "seed_for": 3}}
