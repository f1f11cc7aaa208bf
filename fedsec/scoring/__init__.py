"""Built-in scorers: leakage metrics, each next to its naive baseline.

Importing this package registers them.
"""

from fedsec.scoring.points import PointRecovery
from fedsec.scoring.reconstruction import (
    ReconstructionError,
    advantage,
    check_truth,
    relative_error,
)

__all__ = ["PointRecovery", "ReconstructionError", "advantage", "check_truth", "relative_error"]
