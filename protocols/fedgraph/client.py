"""One FedGraph client's state during a run: its rows, features, labels, model and embeddings.

The protocol's own bookkeeping (:mod:`.protocol` trains the clients, :mod:`.uploads` sends what
they send); nothing here crosses the network.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from fedsec.errors import ValidationError
from fedsec.protocols.fedgraph.setup import scale_inputs

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data.dataset import Dataset
    from fedsec.federation import Party


class Client:
    """One client's data and model during a run (the protocol's own bookkeeping)."""

    def __init__(self, party: Party, inputs: str, test: Dataset) -> None:
        shard = party.shard
        if shard is None or len(shard.cells) != 1 or shard.y is None:
            raise ValidationError(
                f"fedgraph needs every client to hold one block of rows and features with "
                f"their labels; {party.name!r} does not. Use a 'random' partition "
                "(random:parties=10,features=0.1), where every client holds its rows' labels.")
        cell = shard.cells[0]
        self.name = party.name
        self.party = party
        self.rows, self.columns = np.asarray(cell.rows), np.asarray(cell.columns)
        self.X = scale_inputs(cell.X, inputs)
        self.test_X = scale_inputs(test.X[:, self.columns], inputs)
        self.y = np.asarray(cell.y, dtype=np.int64)
        self.model: Any = None
        self.depth = 0
        self.scores: list[float] = []
        self.cluster_size = 0
        self.embeddings = np.empty((0, 0))  # g^depth of its training rows, once chosen
