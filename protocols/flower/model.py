"""The shipped Flower app's model: a one-hidden-layer perceptron in PyTorch, trained by SGD.

McMahan et al., "Communication-Efficient Learning of Deep Networks from Decentralized Data"
(AISTATS 2017): each client runs ``local_epochs`` of minibatch SGD from the global weights;
the server averages the results weighted by the clients' example counts (Flower's FedAvg).
Weights are plain numpy arrays keyed by the torch ``state_dict`` names, as Flower's
``ArrayRecord`` carries them. torch is imported only inside these functions
(:func:`fedsec.nn.require_torch`), which run deterministically (:func:`fedsec.nn.deterministic`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from fedsec.errors import ValidationError
from fedsec.nn import deterministic, require_torch, seeded_init


@dataclass(frozen=True, kw_only=True)
class Architecture:
    """Inputs, hidden units and classes of the perceptron."""

    n_inputs: int
    n_hidden: int
    n_classes: int


LAYERS = ("0.weight", "0.bias", "2.weight", "2.bias")
"""The perceptron's weight names, in Flower's (the torch ``state_dict``) order."""


def architecture_of(shapes: Mapping[str, tuple[int, ...]]) -> Architecture:
    """The perceptron whose weights have these names and shapes (as a recorded global model
    carries them), or ValidationError naming what does not fit.

    >>> architecture_of({"0.weight": (32, 784), "0.bias": (32,), "2.weight": (10, 32),
    ...                  "2.bias": (10,)})
    Architecture(n_inputs=784, n_hidden=32, n_classes=10)
    """
    named = {name: tuple(int(d) for d in shape) for name, shape in shapes.items()}
    if tuple(named) != LAYERS or len(named["0.weight"]) != 2 or len(named["2.weight"]) != 2:
        raise ValidationError(f"Arrays {sorted(named)} are not the Flower FedAvg app's "
                              f"perceptron, whose weights are {', '.join(LAYERS)}.")
    (hidden, inputs), (classes, hidden_out) = named["0.weight"], named["2.weight"]
    if named["0.bias"] != (hidden,) or named["2.bias"] != (classes,) or hidden_out != hidden:
        raise ValidationError(f"Array shapes {named} do not fit a perceptron.")
    return Architecture(n_inputs=inputs, n_hidden=hidden, n_classes=classes)


def build(architecture: Architecture) -> Any:
    """The untrained torch module of ``architecture`` (load weights with :func:`load`)."""
    return _module(architecture)


def load(module: Any, weights: Mapping[str, np.ndarray]) -> None:
    """Put ``weights`` (by name) into ``module``, in its own dtype."""
    _load(module, weights)


def _module(architecture: Architecture) -> Any:
    torch = require_torch("The Flower FedAvg app")
    return torch.nn.Sequential(
        torch.nn.Linear(architecture.n_inputs, architecture.n_hidden), torch.nn.ReLU(),
        torch.nn.Linear(architecture.n_hidden, architecture.n_classes))


def _load(module: Any, weights: Mapping[str, np.ndarray]) -> None:
    torch = require_torch("The Flower FedAvg app")
    dtype = next(module.parameters()).dtype
    module.load_state_dict({k: torch.as_tensor(np.array(v), dtype=dtype)
                            for k, v in weights.items()})


def _weights(module: Any) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy().copy() for k, v in module.state_dict().items()}


def initial_weights(architecture: Architecture, seed: int) -> dict[str, np.ndarray]:
    """Freshly initialised weights (PyTorch's default initialisation, seeded)."""
    with seeded_init(seed, "The Flower FedAvg app"):
        return _weights(_module(architecture))


def train_locally(architecture: Architecture, weights: Mapping[str, np.ndarray],
                  X: np.ndarray, y: np.ndarray, *, epochs: int, batch_size: int, lr: float,
                  seed: int) -> tuple[dict[str, np.ndarray], float]:
    """``epochs`` of minibatch SGD on (X, y) from ``weights``; the new weights and the last
    epoch's mean training loss. Batches are drawn in a seeded random order."""
    torch = require_torch("The Flower FedAvg app")
    with deterministic(seed) as gen:
        module = _module(architecture)
        _load(module, weights)
        optimizer = torch.optim.SGD(module.parameters(), lr=lr)
        features = torch.as_tensor(np.array(X, dtype=np.float32))
        labels = torch.as_tensor(np.array(y, dtype=np.int64))
        loss_fn = torch.nn.CrossEntropyLoss()
        mean_loss = 0.0
        for _ in range(epochs):
            order = torch.randperm(len(labels), generator=gen)
            total = 0.0
            for start in range(0, len(labels), batch_size):
                batch = order[start:start + batch_size]
                optimizer.zero_grad()
                loss = loss_fn(module(features[batch]), labels[batch])
                loss.backward()
                optimizer.step()
                total += loss.item() * len(batch)
            mean_loss = total / max(len(labels), 1)
        return _weights(module), mean_loss


def evaluate(architecture: Architecture, weights: Mapping[str, np.ndarray], X: np.ndarray,
             y: np.ndarray) -> tuple[float, float]:
    """Mean cross-entropy and accuracy of ``weights`` on (X, y)."""
    torch = require_torch("The Flower FedAvg app")
    with deterministic(0):
        logits = _logits(torch, architecture, weights, X)
        labels = torch.as_tensor(np.array(y, dtype=np.int64))
        loss = float(torch.nn.functional.cross_entropy(logits, labels))
        accuracy = float((logits.argmax(dim=1) == labels).float().mean())
    return loss, accuracy


def predict(architecture: Architecture, weights: Mapping[str, np.ndarray],
            X: np.ndarray) -> np.ndarray:
    """Class codes for the rows of X."""
    torch = require_torch("The Flower FedAvg app")
    with deterministic(0):
        logits = _logits(torch, architecture, weights, X)
    return logits.argmax(dim=1).numpy().astype(np.int64)


def _logits(torch: Any, architecture: Architecture, weights: Mapping[str, np.ndarray],
            X: np.ndarray) -> Any:
    """The outputs of the module holding ``weights`` for the rows of X, without gradients."""
    module = _module(architecture)
    _load(module, weights)
    with torch.no_grad():
        return module(torch.as_tensor(np.array(X, dtype=np.float32)))


class PerceptronModel:
    """The trained global model as an estimator: ``predict`` on the dataset's full features."""

    def __init__(self, architecture: Architecture, weights: Mapping[str, np.ndarray]) -> None:
        self.architecture = architecture
        self.weights_ = {k: np.asarray(v) for k, v in weights.items()}

    def predict(self, X: np.ndarray) -> np.ndarray:
        return predict(self.architecture, self.weights_, X)
