"""The model S-FedMV trains: per view a GRU feature extractor, then the MVL consensus head.

Che et al. (ACM TIST 2022), Algorithm 4: each view's sequences go through its bidirectional
GRU extractor (:mod:`.extractor`, PyTorch, imported lazily), and the extracted features
through the test phase of H-FedMV's weights (:class:`.model.ConsensusHead`). The extractors'
weights are kept as numpy vectors in their own layout; predicting rebuilds the networks,
deterministically, as the run evaluated them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from fedsec import nn
from fedsec.data.sequences import SequenceLayout, split_present, to_steps
from fedsec.estimators import check_features
from fedsec.protocols.fedmv import extractor
from fedsec.protocols.fedmv.model import ConsensusHead


@dataclass(frozen=True, kw_only=True)
class SequenceModel:
    """Per view: its columns of the dataset, its sequence layout, its extractor's
    architecture and flattened weights; then the consensus head over the features."""

    columns: tuple[np.ndarray, ...]
    layouts: tuple[SequenceLayout, ...]
    specs: tuple[extractor.ExtractorSpec, ...]
    extractors: tuple[np.ndarray, ...]
    head: ConsensusHead

    @property
    def n_features(self) -> int:
        """The columns of the dataset it reads (every view's)."""
        return int(sum(cols.size for cols in self.columns))

    def features(self, X: np.ndarray) -> list[np.ndarray]:
        """Every view's extracted features (n × 2 hidden each), in view order."""
        X = check_features(X, self.n_features, model="SequenceModel")
        out = []
        with nn.deterministic(0):
            for cols, layout, spec, weights in zip(self.columns, self.layouts, self.specs,
                                                   self.extractors, strict=True):
                network = extractor.build(spec, 0)
                nn.load_flat(network, weights)
                out.append(extractor.extract(network, *split_present(to_steps(X[:, cols],
                                                                              layout), layout)))
        return out

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """Class scores (the consensus over the views' features); the argmax is the class."""
        return self.head.scores(self.features(X))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class codes ``0 .. n_classes - 1`` (the dataset's label encoding)."""
        return np.argmax(self.decision_function(X), axis=1).astype(np.int64)


def sequence_model(groups: Mapping[str, Any], layouts: Mapping[str, SequenceLayout],
                   specs: Mapping[str, extractor.ExtractorSpec], networks: Mapping[str, Any],
                   head: ConsensusHead) -> SequenceModel:
    """The model of trained extractors ``networks`` (per view) and ``head``; ``groups`` are
    the dataset's feature groups (each view's columns)."""
    views = list(layouts)
    return SequenceModel(columns=tuple(np.asarray(groups[v], dtype=np.int64) for v in views),
                         layouts=tuple(layouts[v] for v in views),
                         specs=tuple(specs[v] for v in views),
                         extractors=tuple(nn.flatten(networks[v]) for v in views), head=head)
