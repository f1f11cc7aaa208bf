"""Checks of a scenario as a whole: every run of its grid planned, attacks and threat models
against the protocols they face. Each check appends readable problems to a list."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fedsec import registry
from fedsec.audit.grid import AttackSpec, Cell
from fedsec.errors import FedsecError, UnknownNameError
from fedsec.interfaces import ESTIMATE_KINDS, Attack, Protocol, Scorer
from fedsec.plan import RunConfig, plan
from fedsec.plugin_registry import SearchPath
from fedsec.threat import ThreatModel


def lookup(kind: str, name: str, problems: list[str] | None = None, *,
           search: SearchPath = ()) -> Any:
    """The class ``name`` of ``kind``, or None (the reason appended to ``problems``, if given)."""
    try:
        return registry.get(kind, name, search=search)
    except FedsecError as error:
        if problems is not None:
            problems.append(str(error))
        return None


def check_dataset(dataset: Any, problems: list[str]) -> None:
    """A dataset name (with its options) that exists."""
    from fedsec.data import check_spec

    if dataset is None:
        problems.append("audit.dataset is missing")
        return
    try:
        check_spec(str(dataset))
    except FedsecError as error:
        problems.append(f"{error} (or name a .csv path)" if isinstance(error, UnknownNameError)
                        else str(error))


def check_runs(cells: Iterable[Cell], *, partition: str | Mapping[str, Any] | None,
               backend_params: Mapping[str, Any], search: SearchPath,
               datasets: Sequence[str] = (), test_size: float | int | None = None,
               problems: list[str]) -> None:
    """Plan every distinct run of the grid (seeds aside) as ``fedsec run`` would, and check
    each plan's parameters against the size of every dataset's training set.

    Each distinct problem is reported once, with the first configuration that meets it.
    """
    seen: set[str] = set()
    planned: set[str] = set()
    shapes: dict[tuple[str, float | int], tuple[int, int] | None] = {}
    for cell in cells:
        if cell.configuration in planned:
            continue
        planned.add(cell.configuration)
        config = RunConfig(protocol=cell.protocol, partition=partition, backend=cell.backend,
                           backend_params=dict(backend_params),
                           defenses=[cell.defense] if cell.defense else [],
                           params=dict(cell.params), test_size=test_size,
                           search_path=tuple(search))
        try:
            checked = plan(config, check_dataset=False)
            for dataset in datasets:
                key = (dataset, checked.test_size)
                if key not in shapes:
                    shapes[key] = _training_shape(dataset, checked.test_size)
                shape = shapes[key]
                if shape is not None:
                    checked.protocol.check_data(*shape)
        except FedsecError as error:
            if str(error) not in seen:
                seen.add(str(error))
                problems.append(f"{cell.configuration}: {error}")


def _training_shape(dataset: str, test_size: float | int) -> tuple[int, int] | None:
    """Rows and columns of the training set a run of ``dataset`` gets (None: unreadable here)."""
    from fedsec.data import load_spec

    try:
        train = load_spec(dataset).split(test_size=test_size, rng=0).train
    except FedsecError:
        return None
    return train.n_samples, train.n_features


def check_defenses_apply(defenses: Sequence[tuple[str, Mapping[str, Any]]],
                         protocols: Sequence[type[Protocol]], *, search: SearchPath,
                         problems: list[str]) -> None:
    """A defence that applies to none of the protocols would add no cell."""
    names = {cls.name for cls in protocols}
    for defense in sorted({name for name, _ in defenses}):
        dcls = lookup("defense", defense, search=search)
        if dcls is not None and dcls.protocols and not (dcls.protocols & names):
            problems.append(f"defence {defense!r} applies to none of the protocols "
                            f"({', '.join(sorted(names))}); it applies to "
                            f"{', '.join(sorted(dcls.protocols))}")


def check_attacks_apply(attacks: Sequence[AttackSpec], protocols: Sequence[type[Protocol]], *,
                        search: SearchPath, problems: list[str]) -> None:
    """An attack must apply to at least one protocol (:meth:`Attack.applies_to`)."""
    for attack in attacks:
        acls = lookup("attack", attack.name, search=search)
        if acls is None or not protocols:
            continue
        if not any(acls.applies_to(cls) for cls in protocols):
            problems.append(f"attack {attack.name!r} applies to none of the protocols: "
                            + "; ".join(why_not(acls, cls) for cls in protocols))


def why_not(attack_cls: type[Attack], protocol_cls: type[Protocol]) -> str:
    """Why an attack does not apply to a protocol's transcripts, from the tags both declare."""
    exposes = set(protocol_cls.exposes)
    missing = set(attack_cls.needs_tags) - exposes
    if missing:
        return (f"{protocol_cls.name} exposes no {', '.join(sorted(missing))} "
                f"(it exposes {', '.join(sorted(exposes)) or 'nothing'})")
    if attack_cls.needs_any_tags and not attack_cls.needs_any_tags & exposes:
        return f"{protocol_cls.name} exposes none of {', '.join(sorted(attack_cls.needs_any_tags))}"
    return f"{attack_cls.name} declares it does not apply to {protocol_cls.name}"


def estimate_kinds(attack_cls: type[Attack], search: SearchPath = ()) -> frozenset[str]:
    """What ``attack_cls`` may recover: its declared kind, else every kind its default scorer
    reads (empty: unknown)."""
    if attack_cls.produces:
        return frozenset({attack_cls.produces})
    default = lookup("scorer", attack_cls.default_scorer, search=search)
    return frozenset(getattr(default, "reads", frozenset()))


def scorer_misfit(attack_cls: type[Attack], scorer_cls: type[Scorer],
                  search: SearchPath = (), *, option: str = "") -> str | None:
    """Why ``scorer_cls`` cannot score what ``attack_cls`` recovers, from what both declare
    (:attr:`Attack.produces`, :attr:`Scorer.reads`), naming the scorers that can (each after
    ``option``, such as ``"--scorer "``); None when it can, or when either declares nothing.

    Examples
    --------
    >>> from fedsec import registry
    >>> scorer_misfit(registry.get("attack", "multilateration"),
    ...               registry.get("scorer", "reconstruction-error")) is None
    True
    """
    kinds = estimate_kinds(attack_cls, search)
    if not scorer_cls.reads or not kinds or kinds <= scorer_cls.reads:
        return None
    fitting = []
    for name in registry.names("scorer"):
        other = lookup("scorer", name, search=search)
        if other is not None and other.reads and kinds <= other.reads:
            fitting.append(f"{option}{name} (its default)" if name == attack_cls.default_scorer
                           else f"{option}{name}")
    fitting.sort(key=lambda name: not name.endswith("(its default)"))
    missing = " or ".join(f"{kind!r} ({ESTIMATE_KINDS.get(kind, 'declared by the attack')})"
                          for kind in sorted(kinds - scorer_cls.reads))
    return (f"scorer {scorer_cls.name!r} cannot score what {attack_cls.name!r} recovers: it "
            f"reads {', '.join(map(repr, sorted(scorer_cls.reads)))}, not {missing}; use "
            + (" or ".join(fitting) if fitting else "a scorer that reads it"))


def check_scorers(attacks: Sequence[AttackSpec], *, search: SearchPath,
                  problems: list[str]) -> None:
    """Each attack's scorer must read the kind of estimate the attack recovers."""
    for attack in attacks:
        acls = lookup("attack", attack.name, search=search)
        scls = lookup("scorer", attack.scorer, search=search)
        if acls is None or scls is None:
            continue
        why = scorer_misfit(acls, scls, search)
        if why is not None:
            problems.append(f"attacks ({attack.name}): {why}")


def check_threats(protocols: Mapping[str, type[Protocol]], dataset: Any, partition: Any,
                  attacks: Sequence[AttackSpec], problems: list[str]) -> None:
    """Threat models must name parties that exist in the runs' partitions."""
    if dataset is None or not attacks:
        return
    from fedsec.data import load_spec
    from fedsec.partition import parse_partition
    from fedsec.seeding import generator

    try:
        data = load_spec(str(dataset))
    except FedsecError:
        return
    for name, cls in protocols.items():
        try:
            spec = parse_partition(partition or cls.default_partition)
            layout = spec.apply(n_samples=data.n_samples, feature_groups=data.feature_groups,
                                y=data.y if data.task != "regression" else None,
                                cohorts=data.cohorts, rng=generator(0, "partition"),
                                coordinators=cls.coordinators)
        except FedsecError as error:
            problems.append(f"protocol {name!r}: partition: {error}")
            continue
        for attack in attacks:
            for threat in attack.threats:
                try:
                    ThreatModel.parse(threat).check_parties(layout.parties)
                except FedsecError as error:
                    problems.append(f"attacks ({attack.name}) as {threat!r} on {name}: {error}")


def check_report(report: Any, attacks: Sequence[AttackSpec], *, search: SearchPath,
                 problems: list[str]) -> None:
    """``[report] metric = NAME``: a metric one of the scenario's scorers reports (by their
    glossaries), plotted in the sweep and defence plots in place of the advantage."""
    if report is None:
        return
    if not isinstance(report, Mapping) or set(report) - {"metric"}:
        problems.append("[report] takes one key, metric = \"NAME\" (a metric the scorers "
                        f"report, plotted instead of the advantage); got {report!r}")
        return
    metric = report.get("metric")
    known = {"advantage"}
    for attack in attacks:
        scls = lookup("scorer", attack.scorer, search=search)
        known |= set(getattr(scls, "glossary", {}))
    if not isinstance(metric, str) or metric.removeprefix("baseline_") not in known:
        problems.append(f"report.metric = {metric!r} is not a metric the scenario's scorers "
                        f"report; they report: {', '.join(sorted(known))}")


def split_choice(audit: Mapping[str, Any], base_dir: str, problems: list[str]) -> dict[str, Any]:
    """The scenario's ``split_file`` (beside it) or ``split_seed``, checked."""
    out: dict[str, Any] = {}
    seed = audit.get("split_seed")
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            problems.append(f"audit.split_seed must be a whole number >= 0; got {seed!r}")
        else:
            out["split_seed"] = seed
    name = audit.get("split_file")
    if name is None:
        return out
    if not isinstance(name, str):
        problems.append(f"audit.split_file must be a path; got {name!r}")
        return out
    if seed is not None or audit.get("test_size") is not None:
        problems.append("audit.split_file fixes the test rows; give it without test_size or "
                        "split_seed")
    from fedsec.data.splits import read_split_file

    path = Path(base_dir) / name
    try:
        rows = read_split_file(path)
    except FedsecError as error:
        problems.append(f"audit.split_file: {error}")
        return out
    return {**out, "split_file": str(path), "split_sha256": rows.sha256}
