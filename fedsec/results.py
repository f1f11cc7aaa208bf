"""The result of one run: what ``fedsec run`` writes to ``result.json``."""

from __future__ import annotations

import json
import os
import platform
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from fedsec.outcomes import Outcome
from fedsec.transcript import Transcript

RESULT_FILE = "result.json"
RESULT_SCHEMA_VERSION = "1"


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """Everything one run produced.

    ``record`` is the JSON-able summary written to ``result.json``; the
    transcript and the private store (every party's holdings, the ground
    truth for scoring) are written beside it, never inside it.
    """

    record: Mapping[str, Any]
    outcome: Outcome
    reference: Outcome
    transcript: Transcript
    private: Mapping[str, np.ndarray | bytes] = field(repr=False)

    @property
    def model(self) -> Any:
        """The trained model, when the protocol produces one."""
        return self.outcome.model


def compare(federated: Mapping[str, np.ndarray], centralized: Mapping[str, np.ndarray],
            *, rtol: float) -> dict[str, Any]:
    """How far each federated value is from the centralized reference.

    Examples
    --------
    >>> compare({"s": np.array([1.0, 2.0])}, {"s": np.array([1.0, 2.0])}, rtol=1e-9)["agrees"]
    True
    """
    out: dict[str, Any] = {"rtol": rtol, "values": {}}
    agrees = True
    for key in sorted(set(federated) & set(centralized)):
        a = np.asarray(federated[key], dtype=float)
        b = np.asarray(centralized[key], dtype=float)
        if a.shape != b.shape:
            out["values"][key] = {"shape_federated": list(a.shape),
                                  "shape_centralized": list(b.shape), "agrees": False}
            agrees = False
            continue
        diff = float(np.max(np.abs(a - b))) if a.size else 0.0
        scale = float(np.max(np.abs(b))) if b.size else 0.0
        rel = diff / scale if scale > 0 else diff
        ok = rel <= rtol
        agrees = agrees and ok
        out["values"][key] = {"max_abs_diff": diff, "max_rel_diff": rel, "agrees": ok}
    out["agrees"] = agrees
    return out


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
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=True, allow_nan=True, default=json_default)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def json_default(value: Any) -> Any:
    """``json.dump`` fallback for numpy scalars and arrays."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
