"""What the FedGraph protocol and its reference share: parameters, scaling, metrics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np

from fedsec.declare import Bool, Choice, Declared, Float, Int, owner_of
from fedsec.errors import ValidationError
from fedsec.protocols.fedgraph.models import Training
from fedsec.protocols.fedgraph.privacy_score import ScoreSettings

PAPER = ("Hybrid FedGraph: An efficient hybrid federated learning algorithm using graph "
         "convolutional neural network (arXiv 2024)")
OWNER = "protocol 'fedgraph'"
SERVER = "server"
CLUSTERINGS = ("crc", "random", "kmeans", "none")
INPUTS = ("pixels", "as-is")


@dataclass(frozen=True, kw_only=True)
class FedGraphParams(Declared):
    """Hybrid FedGraph's parameters (the paper's values where it gives them).

    Client MLPs: ``hidden`` units in each of ``layers`` hidden layers (256 and 5), Adam
    (``lr``, ``weight_decay``) for ``epochs`` epochs of batch ``batch_size`` (128). The
    text lost the learning rate, the weight decay and the epoch count: 0.001, 0.0001 and 20
    here.

    Extractor depth: ``depth`` hidden layers, or 0 to let each client choose by the privacy
    score (:func:`.privacy_score.choose_depth`: the largest depth whose score keeps
    ``score_keep``, 0.75, of the range between the worst and the best depth). The score is
    computed on ``score_samples`` of the client's rows (20) with ``score_steps``
    alternating steps and ``lam`` (10,000); with ``scores`` it is computed at every depth
    even when ``depth`` is fixed.

    ``clustering``: ``crc`` (class-conditioned random clustering, share ``in_class`` of one
    class per cluster; 0.7), ``random``, ``kmeans`` (server-side, on raw embeddings), or
    ``none`` (raw embeddings); ``cluster_size`` is ``s`` (the paper: 65 of 60,000 rows; 10
    here for sets of hundreds), or 0 to let each client choose ``s`` by the paper's
    client-side validation (:mod:`.cluster_size`, the same ``score_keep`` rule as the depth;
    the group's first client's choice holds for the group). A client never sends the mean of
    fewer than ``s`` rows: a
    sample group with fewer rows is withheld (``rows_withheld``). ``redraws``: how many
    clusterings each group draws, each from its own seed, sending one set of means per draw
    (1, the paper's single clustering; more re-draws clusters as across epochs, and the
    server trains on every draw's means). Server GCN: ``gcn_layers`` (2) of ``gcn_hidden`` units,
    ``gcn_epochs`` epochs of Adam at ``gcn_lr`` in batches of ``gcn_batch_size`` (16, the
    paper's batch for clusters, which are few). ``inputs``: ``pixels`` maps 0-255 to
    [-1, 1] as the paper does (a fixed map: no statistics cross parties), ``as-is`` keeps
    the values. ``compare``: also train the server's GCN on raw embeddings and under every
    clustering, offline, for the paper's Table 2 columns.
    """

    hidden: Annotated[int, Int(min=1)] = 256
    """Units in each hidden layer of the clients' MLPs (the paper: 256)."""
    layers: Annotated[int, Int(min=1)] = 5
    """Hidden layers of the clients' MLPs (the paper: 5)."""
    epochs: Annotated[int, Int(min=1)] = 20
    """Epochs of Adam training each client's MLP (20: the paper's count is lost)."""
    batch_size: Annotated[int, Int(min=1)] = 128
    """Mini-batch size of the clients' MLP training (the paper: 128)."""
    lr: Annotated[float, Float(min=0.0, min_inclusive=False)] = 0.001
    """Adam learning rate of the clients' MLPs (0.001: the paper's value is lost)."""
    weight_decay: Annotated[float, Float(min=0.0)] = 0.0001
    """Adam weight decay of the clients' MLPs and the server's GCN (0.0001: the paper's value is
    lost)."""
    depth: Annotated[int, Int(min=0)] = 0
    """Hidden layers the extractor keeps (at most layers); 0: each client chooses by the privacy
    score."""
    scores: Annotated[bool, Bool()] = False
    """Compute the privacy score at every depth even when depth is fixed."""
    score_samples: Annotated[int, Int(min=1)] = 20
    """Rows of the client's data the privacy score is computed on (20)."""
    score_steps: Annotated[int, Int(min=1)] = 50
    """Alternating gradient steps of the privacy score's search (50)."""
    score_keep: Annotated[float, Float(min=0.0, max=1.0)] = 0.75
    """A choice by score (depth 0, cluster_size 0) keeps this share of the range between the worst
    and the best score (0.75)."""
    lam: Annotated[float, Float(min=0.0, min_inclusive=False)] = 10_000.0
    """lambda of the privacy score, the weight of the embedding gap ||g(x') - g(x)||^2 (the paper:
    10,000)."""
    clustering: Annotated[str, Choice(*CLUSTERINGS)] = "crc"
    """What clients send: crc (class-conditioned random clusters' means), random (random clusters'
    means), kmeans (server-side, on raw embeddings) or none (raw embeddings)."""
    cluster_size: Annotated[int, Int(min=0)] = 10
    """s, the rows averaged per cluster (the paper: 65 of 60,000 rows); 0: each client chooses s by
    validation (crc and random only)."""
    redraws: Annotated[int, Int(min=1)] = 1
    """Clusterings each group draws, each from its own seed, sending one set of means per draw (1:
    the paper's single clustering)."""
    in_class: Annotated[float, Float(min=0.0, max=1.0)] = 0.7
    """Share of each crc cluster's rows taken from one class (0.7)."""
    gcn_hidden: Annotated[int, Int(min=1)] = 64
    """Units in each layer of the server's GCN (64)."""
    gcn_layers: Annotated[int, Int(min=1)] = 2
    """Layers of the server's GCN (2)."""
    gcn_epochs: Annotated[int, Int(min=1)] = 100
    """Epochs of Adam training the server's GCN (100)."""
    gcn_lr: Annotated[float, Float(min=0.0, min_inclusive=False)] = 0.001
    """Adam learning rate of the server's GCN (0.001)."""
    gcn_batch_size: Annotated[int, Int(min=1)] = 16
    """Mini-batch size of the server's GCN training (16, the paper's batch for clusters)."""
    inputs: Annotated[str, Choice(*INPUTS)] = "pixels"
    """pixels maps 0-255 to [-1, 1] as the paper does (a fixed map: no statistics cross parties);
    as-is keeps the values."""
    compare: Annotated[bool, Bool()] = True
    """Also train the server's GCN on raw embeddings and under every clustering, offline, for the
    paper's Table 2 columns."""

    def __post_init__(self) -> None:
        owner = owner_of(self)
        if self.depth > self.layers:
            raise ValidationError(
                f"{owner}: depth={self.depth} exceeds the MLP's {self.layers} hidden layers; "
                f"choose 1..{self.layers}, or 0 to choose by the privacy score.")
        if self.cluster_size == 0 and self.clustering not in ("crc", "random"):
            raise ValidationError(
                f"{owner}: cluster_size=0 lets each client choose s, which applies where "
                f"clients cluster (crc, random); under clustering={self.clustering} give "
                "cluster_size (for example 10).")

    @property
    def local(self) -> Training:
        return Training(self.epochs, self.batch_size, self.lr, self.weight_decay)

    @property
    def size_training(self) -> Training:
        """The top model a client retrains on cluster means to choose ``s``: its own epochs
        and learning rate, the clusters' batch size (means are few)."""
        return Training(self.epochs, self.gcn_batch_size, self.lr, self.weight_decay)

    @property
    def server(self) -> Training:
        return Training(self.gcn_epochs, self.gcn_batch_size, self.gcn_lr, self.weight_decay)

    @property
    def score_settings(self) -> ScoreSettings:
        return ScoreSettings(steps=self.score_steps, lam=self.lam)


def scale_inputs(X: np.ndarray, inputs: str) -> np.ndarray:
    """The model inputs: pixels 0-255 mapped to [-1, 1], or the values as they are.

    Examples
    --------
    >>> scale_inputs(np.array([[0.0, 255.0]]), "pixels").tolist()
    [[-1.0, 1.0]]
    """
    X = np.asarray(X, dtype=np.float64)
    if inputs == "as-is":
        return X
    if X.size and (X.min() < 0 or X.max() > 255):
        raise ValidationError(
            f"{OWNER}: inputs='pixels' maps pixel values 0-255 to [-1, 1], but these values "
            f"range over [{X.min():g}, {X.max():g}]. Use an image dataset (fashion_mnist_1k, "
            "mnist5k), or set inputs=as-is and scale the data yourself.")
    return X / 127.5 - 1.0


def classification_metrics(y_true: np.ndarray, scores: np.ndarray) -> dict[str, float]:
    """Accuracy and macro F1 of ``argmax scores``."""
    from sklearn.metrics import accuracy_score, f1_score

    predicted = np.argmax(scores, axis=1)
    return {"accuracy": float(accuracy_score(y_true, predicted)),
            "f1": float(f1_score(y_true, predicted, average="macro", zero_division=0))}
