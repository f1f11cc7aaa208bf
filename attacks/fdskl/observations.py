"""Reading an FDSKL transcript as an adversary: every observed sum as a linear form with its values.

The contract between :mod:`fedsec.protocols.fdskl` and the attacks on it is the
transcript: message tags and metadata (see :mod:`fedsec.protocols.fdskl.tags`). This
module reads a View and returns, per *call type* of Algorithm 3 (requester,
excluded worker ``l'``), the linear forms the coalition observed over the
symbols ``[p_1 .. p_q, b_1 .. b_q]`` (partial dot products and offsets) and
their values for every (sample, feature) pair: the T1 and T2 sums it sent or
received, its own partial products (from its features and the directions it
regenerates from the shared seed) and the offsets it drew (its private store).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedsec.errors import CapabilityError
from fedsec.private_store import held_shard, held_value, shard_key
from fedsec.protocols.fdskl import random_features as rf
from fedsec.protocols.fdskl import tags
from fedsec.protocols.fdskl.batches import owned
from fedsec.protocols.fdskl.plans import TreePlan, plan_from_dict
from fedsec.views import View

OWN_OFFSETS = held_value(tags.PRIVATE_OFFSETS)
"""Where a worker's own per-feature offsets sit in its holdings."""
NOISE_MEAN = np.pi
NOISE_VAR = np.pi**2 / 3.0
"""Mean and variance of one offset, uniform on [0, 2 pi]."""


@dataclass
class CallGroup:
    """The pairs of one call type and what the coalition observed about each.

    ``forms`` (k × 2q) are over ``[p_1..p_q, b_1..b_q]``; ``values`` (n × k)
    hold each form's value per pair; ``order`` is the position (in the view)
    of the message that first carried the pair. ``fixed`` marks the offsets
    that are the same for every sample of a feature (all of them with
    per-feature offsets; only ``l'``'s, the phase, with fresh ones).
    """

    requester: str
    excluded: str | None
    forms: np.ndarray
    fixed: np.ndarray
    samples: np.ndarray
    features: np.ndarray
    values: np.ndarray
    order: np.ndarray


@dataclass
class Observations:
    """What a coalition can interpret of an FDSKL run."""

    workers: tuple[str, ...]
    coalition: tuple[str, ...]
    columns: dict[str, np.ndarray]
    n_features: int
    n_samples: int
    mode: str
    plans: dict[str, TreePlan]
    directions: np.ndarray
    own_X: dict[str, np.ndarray]
    own_offsets: dict[str, np.ndarray]
    group: int = 1
    """Random features per iteration (an iteration's features belong to one requester)."""
    groups: list[CallGroup] = field(default_factory=list)

    def truth_key(self, worker: str) -> str:
        """The ground-truth key of a worker's features."""
        return shard_key(worker, 0, "X")


def applicable(view: View) -> str | None:
    """Why an FDSKL view cannot be interpreted, or None."""
    if view.header.get("protocol", {}).get("name") != "fdskl":
        return "the transcript is not an fdskl run"
    if not view.select(tag=tags.PARTIAL_DOT):
        return f"{view.threat} observed no {tags.PARTIAL_DOT} message"
    if tags.SHARED_SEED_KEY not in view.keys:
        return (f"{view.threat} holds no shared seed ({tags.SHARED_SEED_KEY}), so it cannot "
                "regenerate the random directions")
    if not any(m.tag == tags.TREE_PLAN for m in view.messages):
        return f"{view.threat} observed no {tags.TREE_PLAN} message (the trees are unknown)"
    return None


def observe(view: View) -> Observations:
    """Parse ``view`` (refused with the reason when it cannot be interpreted)."""
    reason = applicable(view)
    if reason is not None:
        raise CapabilityError(f"Cannot read this fdskl view: {reason}.")
    params = view.header["protocol"]["params"]
    members = tuple(view.knowledge)
    plans = {}
    for m in view.messages:
        if m.tag == tags.TREE_PLAN:
            plan = plan_from_dict(m.meta[tags.PLAN])
            plans[plan.requester] = plan
    workers = next(iter(plans.values())).workers
    columns: dict[str, np.ndarray] = {}
    n_features = 0
    for m in view.messages:
        if m.tag == tags.FEATURE_COLUMNS:
            columns[m.sender] = np.asarray(m.payload, dtype=int)
            n_features = int(m.meta[tags.N_FEATURES])
    own_X, own_offsets = {}, {}
    cell = {field: held_shard(0, field) for field in ("X", "rows", "columns")}
    for member in members:
        held = view.own(member)
        if OWN_OFFSETS in held:
            own_offsets[member] = np.asarray(held[OWN_OFFSETS], dtype=float)
        if cell["X"] in held:
            order = np.argsort(np.asarray(held[cell["rows"]]))
            own_X[member] = np.asarray(held[cell["X"]], dtype=float)[order]
            columns[member] = np.asarray(held[cell["columns"]], dtype=int)
    n_samples = max((X.shape[0] for X in own_X.values()), default=0)
    width = float(params["kernel_width"])
    for m in view.messages:
        if m.tag == tags.KERNEL_WIDTH:
            width = float(np.asarray(m.payload))
    group = int(params.get("features_per_iteration", 1))  # absent before mini-batches
    holders = _holders(view, int(params["n_iterations"]), int(params.get("batch_size", 1)),
                       group)
    bank = rf.FeatureBank(view.keys[tags.SHARED_SEED_KEY], n_features, kernel=params["kernel"],
                          width=width)
    obs = Observations(workers=workers, coalition=members, columns=columns,
                       n_features=n_features, n_samples=n_samples, mode=params["offsets"],
                       plans=plans, directions=bank.directions(0, holders.size), own_X=own_X,
                       own_offsets=own_offsets, group=group)
    obs.groups = _groups(view, obs, holders)
    return obs


def _holders(view: View, n_iterations: int, batch_size: int, group: int) -> np.ndarray:
    """Per feature, the worker left out of T2 (``-1`` when unseen), from the announcements.

    An announcement's rows are its iterations, their ``batch_size`` samples and the ``l'`` of
    their ``group`` features.
    """
    holders = np.full(n_iterations * group, -1)
    for m in view.select(tag=tags.SAMPLE_INDEX):
        payload = np.asarray(m.payload)
        its = payload[0]
        holders[(its[:, None] * group + np.arange(group)).ravel()] = \
            payload[1 + batch_size:].T.ravel()
    return holders


def _pairs(meta: Any, group: int) -> tuple[np.ndarray, np.ndarray]:
    residue, stride = meta[tags.OWNER_STRIDE]
    samples, features = [], []
    for s, start, stop in meta[tags.PAIRS]:
        js = owned(start, stop, residue, stride, group)
        samples.append(np.full(js.size, s))
        features.append(js)
    return np.concatenate(samples), np.concatenate(features)


def _form(obs: Observations, covers: list[str], with_p: bool) -> np.ndarray:
    q = len(obs.workers)
    row = np.zeros(2 * q)
    for w in covers:
        i = obs.workers.index(w)
        if obs.mode != "none":
            row[q + i] = 1.0
        if with_p:
            row[i] = 1.0
    return row


def _groups(view: View, obs: Observations, holders: np.ndarray) -> list[CallGroup]:
    """Assemble, per call type, the forms and per-pair values the coalition holds."""
    q = len(obs.workers)
    n_features = obs.directions.shape[0]
    per_feature_t2: dict[tuple[str, str], dict[tuple, np.ndarray]] = defaultdict(dict)
    fresh_t2: dict[tuple[int, str, str], list[Any]] = defaultdict(list)
    t1: dict[tuple[int, str], list[Any]] = defaultdict(list)
    for pos, m in enumerate(view.messages):
        if m.tag == tags.PARTIAL_DOT and m.meta.get(tags.TREE) == tags.TREE_SUMS:
            t1[(m.meta[tags.BLOCK], m.meta[tags.REQUESTER])].append((pos, m))
        elif m.tag == tags.OFFSET_SUM:
            pair = (m.meta[tags.REQUESTER], m.meta[tags.EXCLUDED])
            if tags.FEATURES in m.meta:
                table = per_feature_t2[pair].setdefault(
                    (tuple(m.meta[tags.COVERS]), bool(m.meta.get(tags.DELIVERY))),
                    np.full(n_features, np.nan))
                table[np.asarray(m.meta[tags.FEATURES], dtype=int)] = np.asarray(m.payload)
            else:
                fresh_t2[(m.meta[tags.BLOCK], pair[0], pair[1])].append(m)
    collected: dict[tuple, list[tuple[np.ndarray, ...]]] = defaultdict(list)
    forms_of: dict[tuple, np.ndarray] = {}
    for (block, requester), messages in sorted(t1.items()):
        pos0, first = messages[0]
        samples, features = _pairs(first.meta, obs.group)
        excluded = holders[features] if obs.mode != "none" else np.full(features.size, -1)
        known = _known(obs, samples, features)
        for k in np.unique(excluded).tolist():
            rows = excluded == k
            name = obs.workers[k] if k >= 0 else None
            forms = [_form(obs, m.meta[tags.COVERS], True) for _, m in messages]
            cols = [np.asarray(m.payload)[rows] for _, m in messages]
            if name is not None:
                for (covers, _), table in sorted(per_feature_t2.get((requester, name),
                                                                    {}).items()):
                    forms.append(_form(obs, list(covers), False))
                    cols.append(table[features[rows]])
                for m in fresh_t2.get((block, requester, name), []):
                    forms.append(_form(obs, m.meta[tags.COVERS], False))
                    cols.append(np.asarray(m.payload))
            for form, values in known:
                if np.isfinite(values[rows]).all():
                    forms.append(form)
                    cols.append(values[rows])
            F = np.array(forms)
            key = (requester, name, F.tobytes())
            forms_of[key] = F
            collected[key].append((samples[rows], features[rows], np.column_stack(cols),
                                   np.full(int(rows.sum()), pos0)))
    out = []
    for key, parts in collected.items():
        requester, name, _ = key
        values = np.concatenate([p[2] for p in parts])
        good = np.isfinite(values).all(axis=1)
        fixed = np.zeros(q, dtype=bool)
        if obs.mode == "per-feature":
            fixed[:] = True
        elif name is not None:
            fixed[obs.workers.index(name)] = True
        out.append(CallGroup(requester, name, forms_of[key], fixed,
                             np.concatenate([p[0] for p in parts])[good],
                             np.concatenate([p[1] for p in parts])[good], values[good],
                             np.concatenate([p[3] for p in parts])[good]))
    return out


def _known(obs: Observations, samples: np.ndarray,
           features: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The coalition's own partial products and offsets, as forms with values per pair."""
    q = len(obs.workers)
    out = []
    for member, X in obs.own_X.items():
        i = obs.workers.index(member)
        W = obs.directions[:, obs.columns[member]]
        row = np.zeros(2 * q)
        row[i] = 1.0
        out.append((row, np.einsum("ij,ij->i", W[features], X[samples])))
    for member, offsets in obs.own_offsets.items():
        row = np.zeros(2 * q)
        row[q + obs.workers.index(member)] = 1.0
        out.append((row, offsets[features]))
    return out
