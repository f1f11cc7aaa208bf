"""Built-in scorers: leakage metrics, each next to its naive baseline.

Every scorer lives here, whichever family's attacks it serves:
``reconstruction-error`` and ``point-recovery`` (any), ``feature-recovery``
(features in the shard's row order), ``matched-rows`` and ``epsilon-dr``
(permuted rows), ``column-space`` (an estimated basis of a private block's
columns), ``binary-columns`` (0/1 columns recovered exactly), ``sequence-match``
(reconstructed sequences, Hungarian-matched), ``label-counts`` (inferred label
distributions), ``pixel-recovery`` (reconstructed images), ``canary-epsilon`` (canary
guesses as a one-run lower bound on epsilon). Each registers when its module
is imported; the names below are imported from their modules on first use, so importing
this package imports none of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.scoring.canaries import CanaryEpsilon
    from fedsec.scoring.epsilon_dr import EpsilonDR
    from fedsec.scoring.features import FeatureRecovery
    from fedsec.scoring.labels import LabelCounts
    from fedsec.scoring.pixels import PixelRecovery
    from fedsec.scoring.points import PointRecovery
    from fedsec.scoring.reconstruction import (
        ReconstructionError,
        advantage,
        check_truth,
        relative_error,
    )
    from fedsec.scoring.rows import MatchedRows
    from fedsec.scoring.sequences import SequenceMatch
    from fedsec.scoring.subspace import BinaryColumnsScore, ColumnSpace

#: Each public name and the module that defines it.
_MODULES = {
    "BinaryColumnsScore": "subspace", "CanaryEpsilon": "canaries", "ColumnSpace": "subspace",
    "EpsilonDR": "epsilon_dr",
    "FeatureRecovery": "features", "LabelCounts": "labels", "MatchedRows": "rows",
    "PixelRecovery": "pixels", "PointRecovery": "points", "ReconstructionError": "reconstruction",
    "SequenceMatch": "sequences", "advantage": "reconstruction", "check_truth": "reconstruction",
    "relative_error": "reconstruction",
}

__all__ = ["BinaryColumnsScore", "CanaryEpsilon", "ColumnSpace", "EpsilonDR", "FeatureRecovery",
           "LabelCounts", "MatchedRows", "PixelRecovery", "PointRecovery", "ReconstructionError",
           "SequenceMatch", "advantage", "check_truth", "relative_error"]


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_MODULES[name]}"), name)
