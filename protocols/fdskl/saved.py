"""The random features a requester keeps per sample (Algorithm 2, line 4), until they are done.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for Vertically Partitioned
Data" (2020), Algorithm 2, line 4: the values ``phi_j(x_i)`` already computed for a sample are
kept and reused when it is picked again. Kept for every sample to the end they would be the
largest state of a run, 8 bytes per (sample, feature) pair, a third of FDSKL's transcript. But
the samples every iteration draws are fixed when the run starts (:func:`.dsg.schedule`, from the
run's sample key), so a sample's row is dropped as soon as its last visit is over: nothing
reads it again, so no message and no result changes, and what is kept at any time is the rows
of the samples still to come back (a tenth of the total in a 10,000-iteration run on 15,000
samples). Each row is a contiguous array of its own (never a view of a batch's array, which
would keep the whole batch), so reads and their dot products are those of one kept row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from fedsec.protocols.fdskl.batches import owned


def last_visits(samples: np.ndarray, n_samples: int, batch_size: int = 1) -> np.ndarray:
    """Per sample, the last iteration that draws it (-1: none), from the draws of every
    iteration in order (``batch_size`` per iteration).

    Examples
    --------
    >>> last_visits(np.array([2, 0, 2, 1]), 4).tolist()
    [1, 3, 2, -1]
    >>> last_visits(np.array([2, 0, 2, 1]), 4, batch_size=2).tolist()
    [0, 1, 1, -1]
    """
    out = np.full(n_samples, -1)
    np.maximum.at(out, samples, np.arange(samples.size) // batch_size)
    return out


class SavedFeatures:
    """Per sample, its features' values so far, until its last visit.

    ``last_visit`` gives, per sample, the last iteration that draws it (:func:`last_visits`).

    Examples
    --------
    >>> saved = SavedFeatures(np.array([-1, 0]))
    >>> saved.add(1, np.arange(3.0)); saved.add(1, np.arange(3.0, 5.0))
    >>> saved.row(1)[2:4].tolist(), saved.size
    ([2.0, 3.0], 5)
    >>> saved.visited(0, [1]); saved.size
    0
    """

    def __init__(self, last_visit: np.ndarray) -> None:
        self.last_visit = last_visit
        self._rows: dict[int, np.ndarray] = {}

    def add(self, sample: int, values: np.ndarray) -> None:
        """Keep (a copy of) ``values``, the sample's next features in order."""
        row = self._rows.get(sample)
        self._rows[sample] = np.array(values) if row is None else np.concatenate([row, values])

    def row(self, sample: int) -> np.ndarray:
        """The sample's features so far, in order."""
        return self._rows[sample]

    def visited(self, iteration: int, samples: Iterable[int]) -> None:
        """Iteration ``iteration``, which drew ``samples``, is over: drop the rows of those it
        drew for the last time."""
        for s in samples:
            if self.last_visit[s] == iteration:
                self._rows.pop(s, None)

    @property
    def size(self) -> int:
        """How many values are kept, over every sample."""
        return sum(row.size for row in self._rows.values())


def keep_features(saved: SavedFeatures, segments: Sequence[Sequence[int]], phi: np.ndarray,
                  residue: int, stride: int, group: int) -> None:
    """Keep a batch's ``phi`` (one value per pair, in payload order) per sample: each
    ``[sample, start, stop]`` segment covers the requester's features in that range (see
    :func:`~fedsec.protocols.fdskl.batches.owned`)."""
    at = 0
    for s, start, stop in segments:
        m = owned(start, stop, residue, stride, group).size
        saved.add(s, phi[at:at + m])
        at += m
