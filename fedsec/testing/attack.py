"""Conformance of attacks: what an attack returns is a function of its View, and of nothing else.

Part of :mod:`fedsec.testing` (import the checks from there). :func:`check_attack` finds the
adversary an attack applies to (a party, or the smallest coalition), runs it, then holds it to
its View two ways: run again with the run's ground truth out of reach (the View rebuilt from
the transcript and the coalition's own holdings, every other reference to the run dropped), it
must return the same; run on a second run whose truth differs (the next seed), it must not
return the same.
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fedsec import registry
from fedsec.convergence import of_attack
from fedsec.errors import FedsecError
from fedsec.interfaces import Attack
from fedsec.private_store import parse_truth_key
from fedsec.runner import RunConfig, RunResult, run
from fedsec.testing.runs import check_rejects_unknown_parameter
from fedsec.threat import ThreatModel
from fedsec.view import View
from fedsec.views import build_view

Knowledge = Callable[[RunResult, Path], Mapping[str, Any]]

#: Coalitions :func:`check_attack` tries at most per run (single parties first, then pairs,
#: then triples, in the transcript's party order).
COALITIONS_TRIED = 400

#: Kinds of estimate whose order carries nothing (:data:`fedsec.interfaces.ESTIMATE_KINDS`):
#: two runs' truths of these kinds differ only when they differ as multisets.
ORDER_FREE = frozenset({"labels", "unordered-rows", "sequences"})


def check_attack(cls: type[Attack], *, seed: int = 0,
                 runs: Mapping[str, Mapping[str, Any]] | None = None,
                 knowledge: Knowledge | None = None,
                 params: Mapping[str, Any] | None = None) -> None:
    """Bad parameters raise; the attack runs where its tags are observed (by a party alone or,
    for an attack that needs one, by a coalition of two or three), reports its convergence (or
    declares itself a closed form), and reads its View and nothing else:

    * run again on the same View with the run's ground truth out of reach (nothing of the run
      left in memory but its transcript and the coalition's own holdings), it returns the same
      estimates: it neither reads the private store or the protocol's objects, nor draws
      anything at random;
    * run on a second run of the protocol (seed + 1) where the truth of its targets differs,
      it returns other estimates: its output follows what it observed.

    It is tried on each registered protocol it applies to (:meth:`Attack.applies_to`), run
    with its defaults or with the :class:`RunConfig` fields in ``runs[protocol]`` (a smaller
    dataset, another backend; the centralized reference is skipped unless they ask for it).
    An attack that needs prior knowledge beyond the View (known
    records) gets its parameters from ``knowledge(result, folder)``, which may write files
    into ``folder``; ``params`` are further attack parameters (a small budget, for an attack
    whose defaults take minutes).
    """
    check_rejects_unknown_parameter(cls)
    for protocol_name, protocol_cls in registry.protocols.classes().items():
        if not cls.applies_to(protocol_cls):
            continue
        fields = {"protocol": protocol_name, "seed": seed, "reference": False,
                  **dict((runs or {}).get(protocol_name, {}))}
        first = _attack_run(cls, RunConfig(**fields), params, knowledge)
        if first is None:
            continue
        second = _attack_run(cls, RunConfig(**{**fields, "seed": first.seed + 1}), params,
                             knowledge, adversary=first.threat)
        _check_follows_view(cls, protocol_name, first, second)
        return
    raise AssertionError(
        f"{cls.__name__}: no registered protocol exposes {sorted(cls.needs_tags)} to a party "
        "or a coalition of up to three it applies to"
    )


def check_convergence_record(cls: type[Attack], info: Mapping[str, Any]) -> None:
    """An iterative attack says how its optimiser ended (``info["convergence"]``, a record
    :mod:`fedsec.convergence` reads); a closed-form one declares ``closed_form = True``."""
    record = of_attack(info, cls.closed_form)
    assert record["converged"] is not None, (
        f"{cls.__name__}: an iterative attack must report its convergence as "
        "info['convergence'] (fedsec.convergence.judge(...).to_info()), or declare "
        f"closed_form = True; got {record['stopped']}"
        + (f" ({record['error']})" if "error" in record else ""))


def coalitions(parties: Sequence[str], limit: int = COALITIONS_TRIED) -> Iterator[str]:
    """The adversaries a conformance check tries, smallest first: every party alone, then
    every pair, then every triple (``"server,party1"``), at most ``limit`` of them.

    Examples
    --------
    >>> list(coalitions(["a", "b", "c"]))
    ['a', 'b', 'c', 'a,b', 'a,c', 'b,c', 'a,b,c']
    >>> len(list(coalitions([str(i) for i in range(30)], limit=50)))
    50
    """
    tried = 0
    for size in (1, 2, 3):
        for members in itertools.combinations(parties, size):
            if tried >= limit:
                return
            tried += 1
            yield ",".join(members)


@dataclass(frozen=True)
class _Attacked:
    """What one run's attack returned, as fingerprints: no estimate and no truth is kept."""

    threat: str
    seed: int
    estimates: Mapping[str, str]
    truth: Mapping[str, str]


def _attack_run(cls: type[Attack], config: RunConfig, params: Mapping[str, Any] | None,
                knowledge: Knowledge | None, adversary: str | None = None) -> _Attacked | None:
    """Run ``config``, then the attack as the first adversary it applies to (``adversary``
    alone when given); None when there is none. Without ``adversary`` the attack runs a second
    time with the truth out of reach (:func:`_check_view_only`)."""
    result = run(config)
    with tempfile.TemporaryDirectory() as tmp:
        chosen = {**dict(params or {}),
                  **(dict(knowledge(result, Path(tmp))) if knowledge else {})}
        threat = _adversary(cls(**chosen), result, adversary)
        if threat is None:
            return None
        transcript, truth_keys = result.transcript, frozenset(result.private)
        members = set(ThreatModel.parse(threat).members)
        held = {key: value for key, value in result.private.items()
                if parse_truth_key(key).party in members}
        reconstruction = cls(**chosen).run(build_view(transcript, threat, result.private,
                                                      run_seed=config.seed))
        assert set(reconstruction.estimates) <= truth_keys, (
            f"{cls.__name__}: estimates name keys absent from the ground truth: "
            f"{_named(set(reconstruction.estimates) - truth_keys)}")
        check_convergence_record(cls, reconstruction.info)
        seen = _fingerprints(reconstruction.estimates)
        form = _estimate_kind(cls)
        truth = {key: _fingerprint(result.private[key], form) for key in seen}
        if adversary is None:
            del result, reconstruction  # the run's truth goes out of reach
            gc.collect()
            _check_view_only(cls, chosen, build_view(transcript, threat, held,
                                                     run_seed=config.seed), seen)
    return _Attacked(threat, config.seed, seen, truth)


def _adversary(attack: Attack, result: RunResult, only: str | None) -> str | None:
    """The first adversary (:func:`coalitions`, or ``only``) whose View the attack applies to."""
    parties = list(result.transcript.parties)
    if only is not None and not set(ThreatModel.parse(only).members) <= set(parties):
        return None
    for threat in coalitions(parties) if only is None else (only,):
        view = build_view(result.transcript, threat, result.private,
                          run_seed=result.record.seed)
        if attack.not_applicable(view) is None:
            return threat
    return None


def _check_view_only(cls: type[Attack], params: Mapping[str, Any], view: View,
                     seen: Mapping[str, str]) -> None:
    """The attack returns ``seen`` again on ``view`` with nothing else of the run reachable."""
    try:
        blind = _fingerprints(cls(**params).run(view).estimates)
    except Exception as error:
        raise AssertionError(
            f"{cls.__name__}: with the run's ground truth out of reach (nothing of the run left "
            f"but its View) it fails: {type(error).__name__}: {error}. An attack reads its View "
            "alone, never the private store or the protocol's objects") from error
    if blind == seen:
        return
    again = _fingerprints(cls(**params).run(view).estimates)
    drawn = _differing(blind, again)
    assert not drawn, f"{cls.__name__}: two runs on one view differ for {_named(drawn)}"
    raise AssertionError(
        f"{cls.__name__}: with the run's ground truth out of reach its estimates of "
        f"{_named(_differing(seen, blind))} change: it reads something beyond its View (the "
        "private store, the protocol's objects) instead of what its adversary observed")


def _check_follows_view(cls: type[Attack], protocol: str, first: _Attacked,
                        second: _Attacked | None) -> None:
    """Estimates whose truth differs between two runs do not all stay the same."""
    if second is None or set(first.estimates) != set(second.estimates):
        return  # nothing to compare, or the output changed already
    moved = [key for key in first.truth if first.truth[key] != second.truth[key]]
    if moved and not _differing({k: first.estimates[k] for k in moved},
                                {k: second.estimates[k] for k in moved}):
        raise AssertionError(
            f"{cls.__name__}: as {first.threat} in two runs of {protocol} (seeds {first.seed} "
            f"and {second.seed}) it returns the same estimates of {_named(moved)}, whose truth "
            "differs between the runs: its output ignores its View")


def _estimate_kind(cls: type[Attack]) -> str:
    """The kind of estimate the attack returns: declared, or its default scorer's when that
    reads one kind that is order-free (empty: compared as they are)."""
    if cls.produces:
        return cls.produces
    try:
        reads = registry.scorers.get(cls.default_scorer).reads
    except FedsecError:
        return ""
    return next(iter(sorted(reads & ORDER_FREE)), "")


def _fingerprints(values: Mapping[str, Any]) -> dict[str, str]:
    return {key: _fingerprint(value) for key, value in values.items()}


def _fingerprint(value: Any, kind: str = "") -> str:
    """A digest of ``value`` (its dtype, shape and bytes); of its rows (or entries) as a
    multiset for a ``kind`` in :data:`ORDER_FREE`."""
    array = (np.frombuffer(value, dtype=np.uint8) if isinstance(value, bytes)
             else np.asarray(value))
    digest = hashlib.blake2b(f"{array.dtype}{array.shape}".encode(), digest_size=16)
    if array.dtype.kind == "O":
        digest.update(repr(array.tolist()).encode())
        return digest.hexdigest()
    rows = array.reshape(len(array), -1) if array.ndim >= 1 and len(array) else array.reshape(1, -1)
    parts = [row.tobytes() for row in rows]
    for part in sorted(parts) if kind in ORDER_FREE else parts:
        digest.update(part)
    return digest.hexdigest()


def _differing(a: Mapping[str, str], b: Mapping[str, str]) -> list[str]:
    return sorted(key for key in {*a, *b} if a.get(key) != b.get(key))


def _named(keys: Iterable[str], shown: int = 3) -> str:
    keys = sorted(keys)
    more = f" and {len(keys) - shown} more" if len(keys) > shown else ""
    return ", ".join(keys[:shown]) + more
