"""What to run, and the plan that checks it before anything runs.

:func:`plan` is the first of a run's two steps (:func:`fedsec.runner.execute`
is the second): it resolves every name, builds the protocol with its
parameters as the defences configure them, and checks the defences'
applicability, the backend's operations, the dataset's name and options and
the partition's kind — everything that can be checked without data. An audit
validates its grid by planning each cell's run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fedsec import registry
from fedsec.backends.api import MaskingBackend
from fedsec.errors import ValidationError
from fedsec.interfaces import Defense, Protocol
from fedsec.partition.spec import PartitionSpec, parse_partition
from fedsec.validation import check_float, check_int

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data.splits import SplitRows


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """What to run. Names are registry names (or ``module:Class`` paths).

    ``dataset`` is a name, ``NAME:key=value,...`` (options, including
    ``positive=<class>`` for one class against the rest; see
    :func:`fedsec.data.load_spec`) or a ``.csv`` path. ``dataset`` and
    ``partition`` default to the protocol's own defaults, as does ``scaling``
    (``minmax``, ``standard`` or ``none``, fitted on the training rows);
    ``reference=False`` skips the centralized reference (no comparison).
    ``search_path`` lists directories where ``module:Class`` modules are
    looked for first (an audit scenario's own folder).

    ``seed`` is public: it splits the rows and partitions them. ``secret_seed`` is the root of
    everything a party keeps secret (:mod:`fedsec.seeding`): ``None`` (the default) draws a
    fresh 128-bit one for the run, kept only in the private store; give it to reproduce a
    run exactly (the same ``seed`` and ``secret_seed`` give the same transcript).
    """

    protocol: str
    dataset: str | None = None
    partition: str | Mapping[str, Any] | None = None
    backend: str = "plain"
    backend_params: Mapping[str, Any] = field(default_factory=dict)
    defenses: Sequence[tuple[str, Mapping[str, Any]]] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    secret_seed: int | None = None
    test_size: float | int | None = None
    scaling: str | None = None
    reference: bool = True
    search_path: Sequence[str | os.PathLike[str]] = ()
    split_file: str | None = None
    split_seed: int | None = None

    def __post_init__(self) -> None:
        check_int(self.seed, owner="run", name="seed", min_value=0)
        if self.secret_seed is not None:
            check_int(self.secret_seed, owner="run", name="secret_seed", min_value=0)
        if self.split_seed is not None:
            check_int(self.split_seed, owner="run", name="split_seed", min_value=0)
        if self.split_file is not None and (self.test_size is not None
                                            or self.split_seed is not None):
            raise ValidationError(
                "run: a split file fixes the test rows; give it without test_size or "
                "split_seed.")
        if isinstance(self.test_size, int) and not isinstance(self.test_size, bool):
            check_int(self.test_size, owner="run", name="test_size", min_value=1)
        elif self.test_size is not None:
            check_float(self.test_size, owner="run", name="test_size", min_value=0.0,
                        max_value=0.9, min_inclusive=False)


@dataclass(frozen=True, kw_only=True)
class RunPlan:
    """A checked run: its components built, its data and partition named, nothing run."""

    config: RunConfig
    protocol: Protocol
    backend: MaskingBackend
    defenses: tuple[Defense, ...]
    dataset: str
    partition: PartitionSpec
    test_size: float | int
    scaling: str
    split_rows: SplitRows | None = None


def plan(config: RunConfig, *, check_dataset: bool = True) -> RunPlan:
    """Check ``config`` as far as can be done without data; raise at the first problem.

    ``check_dataset=False`` leaves the dataset spec unchecked (a caller that has
    checked it once for many runs).

    Examples
    --------
    >>> checked = plan(RunConfig(protocol="secure-sum", backend="noise"))
    >>> checked.protocol.name, checked.dataset, checked.partition.kind
    ('secure-sum', 'pima', 'horizontal')
    """
    search = tuple(config.search_path)
    protocol_cls = registry.get("protocol", config.protocol, search=search)
    backend = registry.create("backend", config.backend, dict(config.backend_params),
                              search=search)
    defenses = tuple(registry.create("defense", n, dict(p), search=search)
                     for n, p in config.defenses)
    params = dict(config.params)
    for defense in defenses:
        if defense.protocols and protocol_cls.name not in defense.protocols:
            raise ValidationError(
                f"Defence {defense.name!r} does not apply to protocol {protocol_cls.name!r}; it "
                f"applies to: {', '.join(sorted(defense.protocols))}."
            )
        params = defense.configure(params)
    protocol = protocol_cls(**params)
    protocol.check_backend(backend)
    dataset = config.dataset or protocol.default_dataset
    if check_dataset:
        from fedsec.data import check_spec

        check_spec(dataset)
    partition = parse_partition(config.partition or protocol.default_partition)
    if partition.kind not in protocol.partition_kinds:
        raise ValidationError(
            f"Protocol {protocol.name!r} runs on {', '.join(protocol.partition_kinds)} partitions; "
            f"got {partition.kind!r}. Use for example --partition {protocol.default_partition}."
        )
    test_size = protocol.default_test_size if config.test_size is None else config.test_size
    scaling = config.scaling or protocol.scalings[0]
    if scaling not in protocol.scalings:
        raise ValidationError(
            f"Protocol {protocol.name!r} accepts the scalings {', '.join(protocol.scalings)}; "
            f"got {scaling!r}. Leave scaling unset for its default ({protocol.scalings[0]}).")
    split_rows = None
    if config.split_file is not None:
        from fedsec.data.splits import read_split_file

        split_rows = read_split_file(config.split_file)
    return RunPlan(config=config, protocol=protocol, backend=backend, defenses=defenses,
                   dataset=dataset, partition=partition, test_size=test_size, scaling=scaling,
                   split_rows=split_rows)
