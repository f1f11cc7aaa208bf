"""Built-in scorers: leakage metrics, each next to its naive baseline.

Every scorer lives here, whichever family's attacks it serves:
``reconstruction-error`` and ``point-recovery`` (any), ``feature-recovery``
(features in the shard's row order), ``matched-rows`` and ``epsilon-dr``
(permuted rows), ``column-space`` (an estimated basis of a private block's
columns), ``binary-columns`` (0/1 columns recovered exactly), ``sequence-match``
(reconstructed sequences, Hungarian-matched), ``label-counts`` (inferred label
distributions), ``pixel-recovery`` (reconstructed images). Importing this package registers
them.
"""

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

__all__ = ["BinaryColumnsScore", "ColumnSpace", "EpsilonDR", "FeatureRecovery", "LabelCounts",
           "MatchedRows", "PixelRecovery", "PointRecovery", "ReconstructionError",
           "SequenceMatch", "advantage", "check_truth", "relative_error"]
