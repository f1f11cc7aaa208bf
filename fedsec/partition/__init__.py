"""Who holds which rows × which columns: partitions of a dataset among parties.

A partition is a grid of row blocks (cohorts) × feature groups; each cell is
owned by one named party, label ownership is explicit, and rows and features may
overlap between neighbouring parties. A :class:`PartitionSpec` (parsed from a
string such as ``"hybrid:cohorts=2,groups=3"`` or from a TOML table) is
data-independent; :meth:`PartitionSpec.apply` lays it out on a dataset's shape
and returns a checked :class:`Partition`, whose :meth:`Partition.shard` cuts out
one party's private data.

Kinds and their options (defaults in brackets; "data" means decided from the
dataset when the spec is applied):

- ``horizontal``: ``parties`` [3, or one per site], ``size`` [all rows split
  evenly; else exactly ``size`` rows per party, sampled without replacement],
  ``overlap`` [0.0], ``by`` [even | site], ``names`` [party1..], ``roles``.
  Role ``client``; each party holds its own labels.
- ``vertical``: ``parties`` [data: the group count if > 1, else 2], ``by``
  [data: groups if the counts match, else even], ``labels`` [the first party],
  ``overlap`` [0.0], ``names`` [party1..], ``roles``. Role ``worker``.
- ``hybrid``: ``cohorts`` [2, or one per site], ``groups`` [data: the group count
  if > 1, else 3], ``centres`` [shared | per-cohort], ``overlap_rows`` [0.0],
  ``overlap_features`` [0.0], ``by`` [even | site], ``owners`` (explicit grid),
  ``labels`` [the owner of each cohort's group 0], ``roles``. Roles ``hospital``
  (owners of group 0) and ``centre``.
- ``random``: ``parties`` [10], ``features`` [0.1], ``samples`` [1.0], ``names``,
  ``roles``. Each party holds a random share of the columns and of the rows, drawn
  independently, so both may overlap (Hybrid FedGraph's setting). Role ``client``;
  each party holds the labels of its rows.

Row splits are stratified when class codes ``y`` are given. An overlap fraction
``f`` gives each cohort (group) ⌊f·n⌋ of the previous one's ``n`` rows (the last
⌊f·n⌋ columns), cyclically. A party listed in ``labels`` holds the labels of
every cohort in which it owns a cell.

Examples
--------
>>> import numpy as np
>>> from fedsec.partition import parse_partition
>>> part = parse_partition("horizontal:parties=2").apply(
...     n_samples=6, feature_groups={"all": range(2)}, rng=np.random.default_rng(0))
>>> [len(block) for block in part.row_blocks]
[3, 3]
"""

from __future__ import annotations

from fedsec.partition.grid import KINDS, Cell, Partition
from fedsec.partition.names import UnknownPartyError
from fedsec.partition.shard import Shard, ShardCell
from fedsec.partition.spec import PartitionSpec, parse_partition

__all__ = [
    "KINDS",
    "Cell",
    "Partition",
    "PartitionSpec",
    "Shard",
    "ShardCell",
    "UnknownPartyError",
    "parse_partition",
]
