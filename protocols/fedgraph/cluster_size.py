"""A client's own choice of the cluster size ``s`` (the paper's client-side validation).

The paper (Section 3.4) lets each client pick ``s`` in its own domain, without the server and
without the sample groups (it uses pure random clustering): a larger ``s`` hides more, and
the client checks how far its mean embeddings drift by retraining on them and measuring the
loss of accuracy. Its equations and exact rule were lost; fedsec's reading:

- the client holds out a tenth of its training rows (at random, from its own stream);
- for each candidate ``s`` in :data:`SIZES` (those leaving at least two clusters), it cuts the
  other nine tenths into random clusters of size ``s``, trains a fresh top model (the layers
  of its MLP above the cut, and the head) on the cluster-mean embeddings and mean labels, and
  measures that model's accuracy on the held-out rows' raw embeddings;
- it keeps the largest ``s`` whose accuracy keeps ``keep`` of the range between the worst and
  the best candidate: the paper's "where substantial decreases are observed", made concrete
  by the same rule as the extractor's depth (:func:`.privacy_score.choose_depth`).

The first client of a sample group sends its ``s`` with the group's seed; every client of
the group clusters with it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedsec.protocols.fedgraph import clustering, models
from fedsec.protocols.fedgraph.privacy_score import choose_depth

SIZES = (2, 5, 10, 20, 40, 65)
"""The candidate cluster sizes (the paper chose 65 on 60,000 rows)."""


def candidate_sizes(n_rows: int) -> tuple[int, ...]:
    """The candidates that leave at least two clusters of the rows a client trains on.

    Examples
    --------
    >>> candidate_sizes(100), candidate_sizes(3)
    ((2, 5, 10, 20, 40), (2,))
    """
    fitting = tuple(s for s in SIZES if n_rows // s >= 2)
    return fitting or (SIZES[0],)


def choose_size(embeddings: np.ndarray, y: np.ndarray, n_classes: int, *, depth: int,
                layers: int, training: models.Training, keep: float,
                rng: np.random.Generator, seed: int) -> tuple[int, dict[int, float]]:
    """The client's ``s`` and the held-out accuracy of each candidate (see the module)."""
    n = len(y)
    held_out = np.zeros(n, dtype=bool)
    held_out[rng.choice(n, max(1, n // 10), replace=False)] = True
    E_fit, y_fit = embeddings[~held_out], np.asarray(y)[~held_out]
    E_val, y_val = embeddings[held_out], np.asarray(y)[held_out]
    targets = clustering.one_hot(y_fit, n_classes)
    accuracy: dict[int, float] = {}
    for s in candidate_sizes(len(y_fit)):
        clusters = clustering.random_clusters(len(y_fit), s, rng)
        top = _top_model(embeddings.shape[1], layers - depth, n_classes, seed)
        models.fit(top, clustering.cluster_means(E_fit, clusters),
                   clustering.cluster_means(targets, clusters), training, seed)
        predicted = np.argmax(models.predict(top, E_val), axis=1)
        accuracy[s] = float(np.mean(predicted == y_val))
    sizes = list(accuracy)
    return sizes[choose_depth([accuracy[s] for s in sizes], keep) - 1], accuracy


def _top_model(width: int, layers: int, n_classes: int, seed: int) -> Any:
    """The client's MLP above the cut: ``layers`` hidden layers of ``width`` and the head."""
    return models.build_mlp(width, width, layers, n_classes, seed)
