"""Conformance of defences: what they declare is what they do.

Part of :mod:`fedsec.testing` (import the checks from there).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fedsec import registry
from fedsec.interfaces import Defense
from fedsec.runner import RunConfig, RunResult, run
from fedsec.seeding import new_secret_seed
from fedsec.testing.runs import check_rejects_unknown_parameter, registered_name
from fedsec.transcript.payload import encode


def check_defense(cls: type[Defense], *,
                  runs: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """Bad parameters raise; configuring returns a new mapping with the declared ``sets`` and
    ``fixes`` applied; every protocol it names is registered and plans with it; its declared
    mechanism, if any, is one; and a defence that transforms messages changes what crosses at
    its declared points (a run with it against one without, the same seeds; ``runs[protocol]``
    gives smaller :class:`RunConfig` fields).
    """
    from fedsec.plan import plan
    from fedsec.privacy.mechanism import Mechanism

    check_rejects_unknown_parameter(cls)
    defense = cls()
    params: dict[str, Any] = {}
    configured = defense.configure(params)
    assert isinstance(configured, dict), f"{cls.__name__}.configure returned no dict"
    assert params == {}, f"{cls.__name__}.configure mutated its input"
    for key, own in cls.sets.items():
        assert configured.get(key) == getattr(defense.params, own), (
            f"{cls.__name__} declares it sets {key!r} from {own!r}, but configure does not")
    for key, value in cls.fixes.items():
        assert configured.get(key) == value, (
            f"{cls.__name__} declares it fixes {key!r} to {value!r}, but configure does not")
    mechanism = defense.mechanism(configured)
    assert mechanism is None or isinstance(mechanism, Mechanism), (
        f"{cls.__name__}.mechanism returned {type(mechanism).__name__}, not a Mechanism")
    name = registered_name("defense", cls)
    for protocol in sorted(cls.protocols):
        registry.get("protocol", protocol)  # an unknown name raises, naming the valid ones
        plan(RunConfig(protocol=protocol, defenses=[(name, {})],
                       **dict((runs or {}).get(protocol, {}))))
    if cls.points:
        _check_transform(cls, name, runs or {})


def _check_transform(cls: type[Defense], name: str,
                     runs: Mapping[str, Mapping[str, Any]]) -> None:
    """A run with the defence sends something else at one of its points than one without."""
    touched = next((p for p in sorted(cls.protocols)
                    if "*" in cls.points or cls.points & registry.get("protocol", p).exposes),
                   None)
    assert touched is not None, (
        f"{cls.__name__} transforms {sorted(cls.points)}, which none of its protocols "
        f"({sorted(cls.protocols) or 'none named'}) exposes")
    secret = new_secret_seed()
    fields = {"protocol": touched, "secret_seed": secret, "reference": False,
              **dict(runs.get(touched, {}))}
    plain = run(RunConfig(**fields))
    defended = run(RunConfig(**{**fields, "defenses": [(name, {})]}))

    def at_points(result: RunResult) -> list[bytes]:
        return [encode(m.payload)[3] for m in result.transcript.messages
                if "*" in cls.points or m.tag in cls.points]

    before, after = at_points(plain), at_points(defended)
    assert before, f"a run of {touched} sent nothing at {sorted(cls.points)}"
    assert before != after, (
        f"{cls.__name__} declares it transforms {sorted(cls.points)}, but a run of {touched} "
        "with it sends the same there as one without")
