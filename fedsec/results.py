"""The result of one run: what ``fedsec run`` writes to ``result.json``."""

from __future__ import annotations

import json
import os
import platform
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any, cast

import numpy as np

from fedsec.outcomes import Outcome
from fedsec.transcript import Transcript
from fedsec.transcript.check import RESULT_FILE  # noqa: F401 (re-exported)

RESULT_SCHEMA_VERSION = "1"


@dataclass(frozen=True, kw_only=True)
class ValueComparison:
    """How far one federated value is from its centralized counterpart.

    ``max_abs_diff`` and ``max_rel_diff`` are None when the shapes differ
    (``shapes`` then gives both, federated first).
    """

    agrees: bool
    max_abs_diff: float | None = None
    max_rel_diff: float | None = None
    shapes: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    rtol: float | None = None
    """This value's own tolerance, when it is not the comparison's."""
    claimed: bool = True
    """Whether a finite tolerance applied: under an infinite one ``agrees`` holds whatever
    the difference, and the JSON says ``"agrees": null``."""

    def to_json(self) -> dict[str, Any]:
        own = {} if self.rtol is None else {"rtol": self.rtol}
        agrees = self.agrees if self.claimed else None
        if self.shapes is not None:
            return {"shape_federated": list(self.shapes[0]),
                    "shape_centralized": list(self.shapes[1]), "agrees": agrees, **own}
        return {"max_abs_diff": self.max_abs_diff, "max_rel_diff": self.max_rel_diff,
                "agrees": agrees, **own}


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """The federated result against the centralized reference, value by value.

    A protocol that claims no equivalence (``agreement_rtol`` infinite: FedAvg'd models,
    FedGraph's GCN) or a run without a reference claims no agreement: :attr:`claimed` is
    false and ``result.json`` writes ``"agrees": null`` beside ``"claimed": false``, so a
    check on the field cannot pass on a comparison that was never made.
    """

    rtol: float
    values: Mapping[str, ValueComparison]

    @property
    def claimed(self) -> bool:
        """Whether some value was compared against a finite tolerance."""
        return any(v.claimed for v in self.values.values())

    @property
    def agrees(self) -> bool:
        """No value outside its tolerance (true when there is nothing to compare, or no
        agreement is claimed: read :attr:`verdict` where that difference matters)."""
        return all(v.agrees for v in self.values.values())

    @property
    def verdict(self) -> bool | None:
        """:attr:`agrees` where agreement is :attr:`claimed`, otherwise None."""
        return self.agrees if self.claimed else None

    @property
    def worst(self) -> float:
        """The largest relative difference (infinite when shapes differ; 0 for no values)."""
        return max((float("inf") if v.max_rel_diff is None else v.max_rel_diff
                    for v in self.values.values()), default=0.0)

    def to_json(self) -> dict[str, Any]:
        return {"rtol": self.rtol, "values": {k: v.to_json() for k, v in self.values.items()},
                "agrees": self.verdict, "claimed": self.claimed}


@dataclass(frozen=True, kw_only=True)
class DataSummary:
    """The data a run used."""

    name: str
    train_samples: int
    test_samples: int
    features: int
    task: str
    scaling: str
    test_size: float | int
    split: str = "seeded by the run's seed"
    """How the rows were split: by the run's seed, by ``split_seed``, or from a file."""


@dataclass(frozen=True, kw_only=True)
class TranscriptSummary:
    """Where the transcript is, how long it is, and the head of its hash chain."""

    file: str
    messages: int
    head: str


#: The metrics of a model's quality, whose federated-minus-centralized gap a run reports.
QUALITY_METRICS = ("accuracy", "precision", "recall", "f1", "roc_auc", "mse")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """The summary of one run: what ``result.json`` holds.

    The component descriptions (``protocol``, ``backend``, ``defenses``), the
    partition's description and the cost breakdown are the JSON their own
    ``describe()``/:func:`fedsec.cost.summarize` give.
    """

    protocol: Mapping[str, Any]
    backend: Mapping[str, Any]
    defenses: tuple[Mapping[str, Any], ...]
    dataset: DataSummary
    partition: Mapping[str, Any]
    seed: int
    secret_seed_source: str
    """``"random"`` (drawn for the run) or ``"given"`` (the user pinned it); the value itself
    is only in the private store."""
    versions: Mapping[str, str]
    federated_metrics: Mapping[str, Any]
    centralized_metrics: Mapping[str, Any]
    comparison: Comparison
    cost: Mapping[str, Any]
    transcript: TranscriptSummary
    private_store: str
    command: str
    transport: Mapping[str, Any] | None = None
    """What crossed the sockets between party processes (``--transport tcp``); None when
    the parties shared one process."""
    warnings: tuple[str, ...] = ()
    """What the run's numbers do not show by themselves: each a sentence naming the problem
    and what to try (:func:`quality_warnings`)."""
    schema_version: str = RESULT_SCHEMA_VERSION

    @property
    def metric_gaps(self) -> dict[str, float]:
        """Federated minus centralized, for each model-quality metric both report
        (:data:`QUALITY_METRICS`: accuracy, F1, ...; not counts such as rounds)."""
        return {k: float(v) - float(self.centralized_metrics[k])
                for k, v in self.federated_metrics.items()
                if k in QUALITY_METRICS and k in self.centralized_metrics and _number(v)
                and _number(self.centralized_metrics[k])}

    @cached_property
    def privacy(self) -> dict[str, Any]:
        """Epsilon at delta (``epsilon``, ``delta``; an RDP ``epsilon_rdp`` beside) for the
        noise the run's defences declare, accounted per party over its releases
        (:func:`fedsec.privacy.accountant.described_privacy`); epsilon is None, with a
        ``reason``, when no defence adds noise or one relies on no sensitivity bound."""
        from fedsec.privacy.accountant import described_privacy

        return described_privacy(self.defenses, self.protocol, self.backend)

    @property
    def total_cost(self) -> Mapping[str, Any]:
        """Messages, bytes and seconds of the whole run."""
        return cast("Mapping[str, Any]", self.cost["total"])

    def to_json(self) -> dict[str, Any]:
        """The JSON object written to ``result.json``."""
        out = {
            "schema_version": self.schema_version, "protocol": dict(self.protocol),
            "backend": dict(self.backend), "defenses": [dict(d) for d in self.defenses],
            "dataset": asdict(self.dataset), "partition": dict(self.partition),
            "seed": self.seed, "secret_seed": self.secret_seed_source,
            "versions": dict(self.versions),
            "metrics": {"federated": dict(self.federated_metrics),
                        "centralized": dict(self.centralized_metrics),
                        "gap": self.metric_gaps},
            "comparison": self.comparison.to_json(), "privacy": self.privacy,
            "cost": dict(self.cost),
            "transcript": asdict(self.transcript), "private_store": self.private_store,
            "command": self.command, "warnings": list(self.warnings),
        }
        if self.transport is not None:
            out["transport"] = dict(self.transport)
        return out


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """Everything one run produced.

    ``record`` is the summary written to ``result.json``; the transcript and
    the private store (every party's holdings, the ground truth for scoring)
    are written beside it, never inside it.
    """

    record: RunRecord
    outcome: Outcome
    reference: Outcome
    transcript: Transcript
    private: Mapping[str, np.ndarray | bytes] = field(repr=False)

    @property
    def model(self) -> Any:
        """The trained model, an estimator with ``predict`` (see :class:`~fedsec.outcomes.Outcome`);
        None when the protocol trains none (``secure-sum``). ``reference.model`` is the
        centralized reference's."""
        return self.outcome.model


def compare(federated: Mapping[str, np.ndarray], centralized: Mapping[str, np.ndarray],
            *, rtol: float, tolerances: Mapping[str, float] | None = None) -> Comparison:
    """How far each federated value is from the centralized reference (within ``rtol``, or
    the value's own entry in ``tolerances``).

    Examples
    --------
    >>> compare({"s": np.array([1.0, 2.0])}, {"s": np.array([1.0, 2.0])}, rtol=1e-9).agrees
    True
    >>> compare({"s": np.array([1.0])}, {"s": np.array([2.0])}, rtol=1e-9).worst
    0.5
    >>> compare({"s": np.array([1.0])}, {"s": np.array([1.1])}, rtol=1e-9,
    ...         tolerances={"s": 0.2}).agrees
    True
    >>> compare({"s": np.array([1.0])}, {"s": np.array([5.0])}, rtol=float("inf")).verdict
    """
    values: dict[str, ValueComparison] = {}
    for key in sorted(set(federated) & set(centralized)):
        a = np.asarray(federated[key], dtype=float)
        b = np.asarray(centralized[key], dtype=float)
        own = (tolerances or {}).get(key)
        tolerance = rtol if own is None else own
        claimed = bool(np.isfinite(tolerance))
        if a.shape != b.shape:
            values[key] = ValueComparison(agrees=False, shapes=(a.shape, b.shape), rtol=own,
                                          claimed=claimed)
            continue
        diff = float(np.max(np.abs(a - b))) if a.size else 0.0
        scale = float(np.max(np.abs(b))) if b.size else 0.0
        rel = diff / scale if scale > 0 else diff
        values[key] = ValueComparison(agrees=rel <= tolerance, max_abs_diff=diff,
                                      max_rel_diff=rel, rtol=own, claimed=claimed)
    return Comparison(rtol=rtol, values=values)


def majority_rate(y: np.ndarray) -> tuple[int, float]:
    """The most frequent class code of ``y`` and its share: the accuracy of always
    predicting it (ties go to the smaller code).

    Examples
    --------
    >>> majority_rate(np.array([0, 1, 1, 2]))
    (1, 0.5)
    """
    codes = np.asarray(y, dtype=np.int64)
    if codes.size == 0:
        raise ValueError("majority_rate needs at least one label.")
    counts = np.bincount(codes)
    top = int(np.argmax(counts))
    return top, float(counts[top] / codes.size)


def quality_warnings(federated: Mapping[str, Any], centralized: Mapping[str, Any],
                     y_test: np.ndarray, *, task: str, protocol: str,
                     class_names: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Warnings about a model that does worse than a constant: a classifier's federated test
    accuracy below the test set's majority-class rate, or a regression's test ``mse`` above
    the test targets' variance (the error of always predicting their mean). Either usually
    means the training diverged or stopped far from a solution, not that the federation costs
    that much. None when the protocol reports neither figure.

    Examples
    --------
    >>> quality_warnings({"accuracy": 0.9}, {}, np.array([0, 1, 1]), task="binary",
    ...                  protocol="p")
    ()
    >>> len(quality_warnings({"accuracy": 0.5}, {}, np.array([0, 1, 1, 1]), task="binary",
    ...                      protocol="p"))
    1
    >>> len(quality_warnings({"mse": 3.0}, {}, np.array([0.0, 2.0]), task="regression",
    ...                      protocol="p"))  # the variance is 1
    1
    """
    if np.size(y_test) == 0:
        return ()
    if task == "regression":
        if not _number(federated.get("mse")):
            return ()
        error, variance = float(federated["mse"]), float(np.var(np.asarray(y_test, float)))
        if error <= variance + 1e-12:
            return ()
        worse = (f"The federated model's test mean squared error {error:.4g} is above the "
                 f"test targets' variance {variance:.4g} (always predicting their mean)")
        key, shown, reference_worse = "mse", "{:.4g}", lambda value: value > variance + 1e-12
    else:
        if not _number(federated.get("accuracy")):
            return ()
        accuracy = float(federated["accuracy"])
        top, rate = majority_rate(y_test)
        if accuracy >= rate - 1e-12:
            return ()
        name = class_names[top] if top < len(class_names) else str(top)
        worse = (f"The federated model's test accuracy {accuracy:.3f} is below the test "
                 f"set's majority-class rate {rate:.3f} (always answering class {name!r})")
        key, shown, reference_worse = "accuracy", "{:.3f}", lambda value: value < rate - 1e-12
    reference = float(centralized[key]) if _number(centralized.get(key)) else None
    if reference is None:
        where = "No centralized reference was computed to tell the two apart."
    elif reference_worse(reference):
        where = (f"The centralized reference scores {shown.format(reference)}, worse than "
                 "that too: "
                 "the training settings fail, not the federation.")
    else:
        where = (f"The centralized reference scores {shown.format(reference)}: the federated "
                 "training lost what the pooled one learned.")
    return (f"{worse}: the model does worse than a constant guess, so its {key} and its gap "
            f"to the reference say little about the protocol. {where} Try other training "
            "settings: a smaller step size or learning rate, more iterations or epochs, "
            f"another loss or regularization ('fedsec describe {protocol}' lists the "
            "parameters).",)


def versions() -> dict[str, str]:
    """Versions of fedsec, Python and the libraries that shape results."""
    return dict(_versions())


@cache  # reading package metadata costs milliseconds, more than a small run
def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    import fedsec

    out = {"fedsec": fedsec.__version__, "python": platform.python_version()}
    for dist in ("numpy", "scipy", "scikit-learn", "pyarrow"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:  # pragma: no cover
            out[dist] = "not installed"
    return out


def write_json(path: str | os.PathLike[str], data: Mapping[str, Any]) -> None:
    """Write JSON atomically (temporary file, then rename)."""

    def dump(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=True, allow_nan=True, default=json_default)
            handle.write("\n")

    write_atomically(path, dump)


def write_atomically(path: str | os.PathLike[str], write: Callable[[Path], None]) -> None:
    """Have ``write`` fill a temporary file beside ``path``, then rename it into place: a
    reader sees the old file or the whole new one, never half of it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def json_default(value: Any) -> Any:
    """``json.dump`` fallback for numpy scalars and arrays."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
