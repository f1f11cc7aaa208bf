"""Sequence datasets: views whose columns are time steps of a few channels.

A :class:`~fedsec.data.Dataset` is a table, so a sequence view is stored flattened, time
major: its feature group holds the columns ``{view}.{channel}[{t}]`` for ``t = 0 .. T-1``
and every channel at each step, in that order. Sequences shorter than ``T`` are padded at
the end with zeros, and the view then carries a channel named :data:`PRESENT` (1 for a real
step, 0 for padding); without it every sequence has the full length. Different views may
have different lengths ``T`` and channels (key presses, special-key events, accelerometer
samples of one typing session).

Padding must stay zero and :data:`PRESENT` must stay 0/1, so sequence views are read
unscaled (protocols on sequences default to ``scaling = "none"``).

Examples
--------
>>> names = sequence_feature_names("acc", ("x", "y"), 3)
>>> names[:3]
('acc.x[0]', 'acc.y[0]', 'acc.x[1]')
>>> layout = parse_layout("acc", names)
>>> layout.channels, layout.length
(('x', 'y'), 3)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fedsec.errors import ValidationError

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data.dataset import Dataset

PRESENT = "present"
"""The channel that marks real steps (1) against end padding (0)."""

_NAME = re.compile(r"^(?P<view>.+)\.(?P<channel>[^.\[\]]+)\[(?P<t>\d+)\]$")


@dataclass(frozen=True)
class SequenceLayout:
    """One sequence view: its name, channels in column order, and its length ``T``."""

    view: str
    channels: tuple[str, ...]
    length: int

    @property
    def inputs(self) -> tuple[str, ...]:
        """The channels a model reads: every channel but :data:`PRESENT`."""
        return tuple(c for c in self.channels if c != PRESENT)

    @property
    def n_columns(self) -> int:
        return self.length * len(self.channels)


def sequence_feature_names(view: str, channels: Sequence[str], length: int) -> tuple[str, ...]:
    """The column names of a sequence view, time major."""
    return tuple(f"{view}.{c}[{t}]" for t in range(length) for c in channels)


def parse_layout(view: str, names: Sequence[str]) -> SequenceLayout:
    """The layout of view ``view`` from its column names, checked step by step.

    Raises
    ------
    fedsec.errors.ValidationError
        If a name does not follow ``{view}.{channel}[{t}]`` or the columns are not every
        channel at every step, time major.
    """
    parsed = [_NAME.match(n) for n in names]
    if not names or any(m is None or m["view"] != view for m in parsed):
        bad = next((n for n, m in zip(names, parsed, strict=True)
                    if m is None or m["view"] != view), "(no columns)")
        raise ValidationError(
            f"view {view!r} is not a sequence view: column {bad!r} is not named "
            f"'{view}.<channel>[<step>]'. Sequence protocols need a sequence dataset such as "
            "keystrokes or basic_motions.")
    channels: list[str] = []
    for m in parsed:
        assert m is not None
        if int(m["t"]) != 0:
            break
        channels.append(m["channel"])
    length = len(names) // max(len(channels), 1)
    expected = sequence_feature_names(view, channels, length)
    if tuple(names) != expected:
        raise ValidationError(
            f"the columns of sequence view {view!r} are not every channel at every step, "
            f"time major (expected {expected[:3]} ...).")
    return SequenceLayout(view=view, channels=tuple(channels), length=length)


def sequence_layouts(dataset: Dataset) -> dict[str, SequenceLayout]:
    """Every view of a sequence dataset, in the order of its feature groups."""
    return {view: parse_layout(view, [dataset.feature_names[i] for i in cols])
            for view, cols in dataset.feature_groups.items()}


def to_steps(X: np.ndarray, layout: SequenceLayout) -> np.ndarray:
    """A view's flattened columns ``(n, T * c)`` as ``(n, T, c)`` (every channel)."""
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] != layout.n_columns:
        raise ValidationError(
            f"sequence view {layout.view!r} has {layout.n_columns} columns; got an array of "
            f"shape {X.shape}.")
    return X.reshape(X.shape[0], layout.length, len(layout.channels))


def split_present(steps: np.ndarray, layout: SequenceLayout) -> tuple[np.ndarray, np.ndarray]:
    """The model inputs ``(n, T, c')`` without :data:`PRESENT`, and each sequence's length.

    Raises
    ------
    fedsec.errors.ValidationError
        If :data:`PRESENT` is not 0/1, a sequence is empty, or a real step follows padding.
    """
    if PRESENT not in layout.channels:
        return steps, np.full(steps.shape[0], layout.length, dtype=np.int64)
    at = layout.channels.index(PRESENT)
    present = steps[:, :, at]
    if not np.isin(present, (0.0, 1.0)).all():
        raise ValidationError(
            f"channel {PRESENT!r} of sequence view {layout.view!r} holds values other than 0 "
            "and 1: the view was scaled. Run sequence protocols with scaling 'none'.")
    lengths = present.sum(axis=1).astype(np.int64)
    if (lengths < 1).any():
        raise ValidationError(f"sequence view {layout.view!r} has an empty sequence.")
    if (np.diff(present, axis=1) > 0).any():
        raise ValidationError(
            f"sequence view {layout.view!r} has a real step after padding; padding must "
            "come at the end.")
    keep = [i for i, c in enumerate(layout.channels) if c != PRESENT]
    return steps[:, :, keep], lengths
