"""What MVL, V-FedMV and H-FedMV share: parameters, views, starting points, metrics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np

from fedsec.declare import Declared, Float, Int
from fedsec.errors import ValidationError
from fedsec.interfaces import Protocol
from fedsec.outcomes import Outcome
from fedsec.protocols.fedmv import maths, tags
from fedsec.protocols.fedmv.model import multiview_model
from fedsec.seeding import generator

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data import Dataset
    from fedsec.federation import Federation, Party

PAPER = ("Che, Kong, Zhang, Dong, Hu, Xie, Deng, Gao, Sun, Yin, Federated Multi-View Learning "
         "for Private Medical Data Integration and Analysis, ACM TIST 2022")
SERVER = "server"
DEFAULT_DATASET = "mfeat:views=fou+kar+zer"


@dataclass(frozen=True, kw_only=True)
class MVLParams(Declared):
    """Parameters of MVL and its federated variants (the paper's values as defaults).

    ``beta``: the l2,1 weight of every view (the paper: 4). ``zeta``: the weight tying each
    view's estimate to the consensus; ``eta``: the weight tying the consensus to the labels
    (the paper picks both from {2^0, ..., 2^5} on validation data; 1 here). ``tol`` and
    ``max_rounds``: the outer loop stops when the consensus changes by at most ``tol``
    (relative) or after ``max_rounds`` rounds. ``inner_tol``, ``max_inner``: IRLS for each
    ``W_k``. ``eps``: IRLS's guard against a zero row. ``test_tol``, ``max_test_steps``:
    the test phase's averaging loop.
    """

    beta: Annotated[float, Float(min=0.0)] = 4.0
    """Weight of the l2,1 penalty beta ||W_k||_{2,1} on every view's weights (the paper: 4)."""
    zeta: Annotated[float, Float(min=0.0, min_inclusive=False)] = 1.0
    """Weight tying each view's estimate X_k W_k to the consensus (the paper picks it from 2^0..2^5
    on validation data)."""
    eta: Annotated[float, Float(min=0.0, min_inclusive=False)] = 1.0
    """Weight tying the consensus to the labels (the paper picks it from 2^0..2^5 on validation
    data)."""
    tol: Annotated[float, Float(min=0.0, min_inclusive=False)] = 1e-6
    """The outer loop stops when the consensus changes by at most tol (relative change)."""
    max_rounds: Annotated[int, Int(min=1)] = 100
    """Rounds of the outer loop at most."""
    inner_tol: Annotated[float, Float(min=0.0, min_inclusive=False)] = 1e-6
    """IRLS for each W_k stops when W_k changes by at most inner_tol (relative change)."""
    max_inner: Annotated[int, Int(min=1)] = 20
    """IRLS steps at most for each W_k."""
    eps: Annotated[float, Float(min=0.0, min_inclusive=False)] = 1e-8
    """IRLS's guard against a zero row: row weights 1 / (2 (||w_i|| + eps))."""
    test_tol: Annotated[float, Float(min=0.0, min_inclusive=False)] = 1e-10
    """The test phase's averaging loop stops when the consensus changes by at most test_tol
    (relative change)."""
    max_test_steps: Annotated[int, Int(min=1)] = 1000
    """Steps of the test phase's averaging loop at most."""

    @property
    def settings(self) -> maths.Settings:
        return maths.Settings(tol=self.tol, max_rounds=self.max_rounds,
                              inner_tol=self.inner_tol, max_inner=self.max_inner, eps=self.eps)


def view_columns(feature_groups: Mapping[str, Sequence[int]]) -> dict[str, np.ndarray]:
    """The views: the dataset's feature groups (at least two, or there is one view only)."""
    if len(feature_groups) < 2:
        raise ValidationError(
            "FedMV needs a dataset with two or more views (feature groups), such as mfeat or "
            "nutrimouse; this one has "
            f"{len(feature_groups)} ({', '.join(feature_groups) or 'none'})."
        )
    return {name: np.asarray(cols, dtype=np.int64) for name, cols in feature_groups.items()}


def initial_weights(seed: int, view: str, n_features: int, n_classes: int) -> np.ndarray:
    """A view's starting ``W_k`` (standard normal), from its own stream of the run's seed."""
    return generator(seed, f"fedmv/init/weights/{view}").normal(size=(n_features, n_classes))


def initial_estimate(seed: int, view: str, n_rows: int, n_classes: int) -> np.ndarray:
    """A view's starting ``Z_k``: random with orthonormal columns (the paper's start)."""
    return maths.orthonormal(generator(seed, f"fedmv/init/estimate/{view}"), n_rows, n_classes)


def initial_consensus(seed: int, n_rows: int, n_classes: int) -> np.ndarray:
    """The starting consensus ``Z``: random with orthonormal columns."""
    return maths.orthonormal(generator(seed, "fedmv/init/consensus"), n_rows, n_classes)


def n_classes(train: Dataset) -> int:
    """The number of classes (the columns of ``Y``)."""
    if train.task == "regression":
        raise ValidationError("FedMV is a classifier; choose a classification dataset.")
    return len(train.class_names)


def classification_metrics(y_true: np.ndarray, scores: np.ndarray) -> dict[str, float]:
    """Accuracy and macro precision, recall and F1 of ``argmax scores``."""
    from sklearn.metrics import accuracy_score, precision_recall_fscore_support

    predicted = np.argmax(scores, axis=1)
    precision, recall, f1, _ = precision_recall_fscore_support(
        y_true, predicted, average="macro", zero_division=0)
    return {"accuracy": float(accuracy_score(y_true, predicted)), "precision": float(precision),
            "recall": float(recall), "f1": float(f1)}


class FederatedMVL(Protocol):
    """What V-FedMV and H-FedMV share: a server, the backend's sum, the centralized reference."""

    paper = PAPER
    default_dataset = DEFAULT_DATASET
    coordinators = ((SERVER, "server"),)
    requires = frozenset({"sum"})
    renamed_tags = tags.RENAMED

    def reference(self, train: Dataset, test: Dataset, *, seed: int) -> Outcome:
        return centralized(self.params, train, test, seed)


def labelled_clients(federation: Federation, protocol: str) -> tuple[Dataset, list[Party]]:
    """The run's test rows and its clients, refused unless every client holds its rows' labels
    (H-FedMV and S-FedMV train on each client's own labelled rows and test on the run's)."""
    test = federation.test
    if test is None:
        raise ValidationError(f"{protocol} evaluates on the run's test rows and needs them.")
    clients = federation.data_parties()
    if any(c.shard is None or c.held_shard().y is None for c in clients):
        raise ValidationError(f"{protocol} needs every client to hold the labels of its rows.")
    return test, clients


def centralized(params: MVLParams, train: Dataset, test: Dataset, seed: int) -> Outcome:
    """Algorithm 1 on the pooled views, then the test phase: the reference of V-FedMV."""
    views = view_columns(train.feature_groups)
    C = n_classes(train)
    Xs = [train.X[:, cols] for cols in views.values()]
    Y = maths.one_hot(train.y, C)
    N = train.n_samples
    fit = maths.fit_mvl(
        Xs, Y, betas=[params.beta] * len(Xs), zetas=[params.zeta] * len(Xs), eta=params.eta,
        Ws=[initial_weights(seed, v, X.shape[1], C) for v, X in zip(views, Xs, strict=True)],
        Zs=[initial_estimate(seed, v, N, C) for v in views],
        Z=initial_consensus(seed, N, C), settings=params.settings)
    scores, steps = maths.test_consensus(
        [test.X[:, cols] @ W for cols, W in zip(views.values(), fit.Ws, strict=True)],
        [params.zeta] * len(Xs), tol=params.test_tol, max_iter=params.max_test_steps)
    metrics: dict[str, Any] = classification_metrics(test.y, scores)
    metrics.update(rounds=fit.rounds, converged=fit.converged, test_steps=steps)
    values = {f"W/{view}": W for view, W in zip(views, fit.Ws, strict=True)}
    values["test_scores"] = scores
    model = multiview_model(list(views.values()), fit.Ws, params.zeta, params.test_tol,
                            params.max_test_steps)
    return Outcome(metrics=metrics, values=values, model=model)
