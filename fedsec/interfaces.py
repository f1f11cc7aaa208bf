"""The plug-in interfaces: Protocol, MaskingBackend, Attack, Defense, Scorer.

``MaskingBackend`` lives in :mod:`fedsec.backends.api` and is re-exported here.

Each is a small abstract base with one or a few verbs. What a component
needs or offers is declared as class-level data (``requires``, ``exposes``,
``operations``, ``needs_tags``), so mismatches are found before anything runs.
Parameters are a keyword-only frozen dataclass named ``Params`` on the class.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import numpy as np

from fedsec.backends.api import MaskingBackend, backends
from fedsec.component import Component
from fedsec.declare import Int
from fedsec.errors import CapabilityError
from fedsec.outcomes import Outcome, Reconstruction
from fedsec.progress import Progress, ProgressHook

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data import Dataset
    from fedsec.federation import Federation, Party
    from fedsec.privacy.mechanism import Mechanism
    from fedsec.view import View


#: The kinds of estimate an attack's Reconstruction can hold (:attr:`Attack.produces`) and a
#: scorer can score (:attr:`Scorer.reads`), each in words: an audit refuses a scorer that cannot
#: read what its attack recovers before any run starts.
ESTIMATE_KINDS: Mapping[str, str] = {
    "values": "values keyed and shaped like the truth, compared entry by entry, such as a "
              "party's vector or a Gram block",
    "rows": "records, one row per record in the party's own order",
    "unordered-rows": "records in an unknown row order",
    "basis": "a basis of a private block's column space",
    "binary-columns": "0/1 columns found among a block's",
    "sequences": "sequences in no particular order",
    "labels": "class labels",
}

#: An attack's ``seed`` parameter: the seed of its own random stream (random starts, initial
#: weights); None, its default, derives it from the run (:meth:`Attack.seed_for`).
AttackSeed = Annotated[int | None, Int(min=0)]


class Protocol(Component, ABC):
    """A federated protocol: runs among the parties of a Federation.

    Declares the partition kinds it accepts, the coordinator parties it adds
    (name, role), the backend operations it needs and the message tags its
    transcript exposes.
    """

    kind = "protocol"
    partition_kinds: ClassVar[tuple[str, ...]] = ("horizontal", "vertical", "hybrid")
    default_partition: ClassVar[str] = "horizontal:parties=3"
    default_dataset: ClassVar[str] = "iris"
    default_test_size: ClassVar[float | int] = 0.25  # a fraction, or a number of test rows
    coordinators: ClassVar[tuple[tuple[str, str], ...]] = ()
    requires: ClassVar[frozenset[str]] = frozenset()
    exposes: ClassVar[frozenset[str]] = frozenset()
    uses_backend: ClassVar[bool] = True
    """False when nothing goes through the masking backend: only ``plain`` is accepted."""
    backend_note: ClassVar[str] = ""
    """Why the protocol uses no masking backend (shown when another one is asked for)."""
    scalings: ClassVar[tuple[str, ...]] = ("minmax", "standard", "none")
    """The feature scalings the protocol accepts; the first is its default."""
    renamed_tags: ClassVar[Mapping[str, str]] = {}
    """Tags of transcripts written by older fedsec versions → today's (the family's
    ``tags.RENAMED``); views translate them."""

    @classmethod
    def capabilities(cls) -> dict[str, Any]:
        return {"partition_kinds": list(cls.partition_kinds), "requires": sorted(cls.requires),
                "exposes": sorted(cls.exposes), "uses_backend": cls.uses_backend,
                "coordinators": [list(c) for c in cls.coordinators]}

    @classmethod
    def check_backend(cls, backend: type[MaskingBackend] | MaskingBackend) -> None:
        """Refuse a backend this protocol does not use, or one lacking an operation it needs."""
        if not cls.uses_backend and backend.name != "plain":
            note = f" ({cls.backend_note})" if cls.backend_note else ""
            raise CapabilityError(
                f"Protocol {cls.name!r} sends nothing through a masking backend{note}, so the "
                f"{backend.name!r} backend would change nothing; use the plain backend "
                "(the default)."
            )
        check_operations(backend, cls.requires, who=f"Protocol {cls.name!r}")

    def check_data(self, n_samples: int, n_features: int) -> None:
        """Refuse a training set these parameters cannot run on (``n_samples`` training rows
        of ``n_features`` columns); called before anything runs, by ``fedsec run`` and by an
        audit's validation. Accepts everything by default."""

    def agreement_rtol(self, backend: MaskingBackend) -> float:
        """How close (relative) the federated result must be to the centralized one."""
        return 1e-9 if backend.exact else 1e-6

    def agreement_tolerances(self, backend: MaskingBackend, reference: Outcome
                             ) -> dict[str, float]:
        """Per value, a tolerance other than :meth:`agreement_rtol` (none by default): for
        values known exactly (0) or as stable as the reference's own conditioning allows."""
        return {}

    def mechanisms(self) -> tuple[Mechanism, ...]:
        """The noise this protocol's own settings add (a framework's built-in differential
        privacy, say), as an accountant reads it beside the defences'
        (:class:`~fedsec.privacy.mechanism.Mechanism`); none by default. Declared from the
        parameters alone: a run's record rebuilds the protocol from them to account it."""
        return ()

    @abstractmethod
    def run(self, federation: Federation, backend: MaskingBackend,
            defenses: Sequence[Defense] = ()) -> Outcome:
        """Run among the federation's parties; every exchange goes through its network."""

    @abstractmethod
    def reference(self, train: Dataset, test: Dataset, *, seed: int) -> Outcome:
        """The centralized computation the federated run must match.

        ``seed`` is the run's secret seed (``federation.secret_seed``), for references that
        draw the same randomness (landmarks, starting points) as the federated run.
        """


class CentralizedProtocol(Protocol):
    """A centralized reference run as a protocol: one party holds every row and feature.

    No message is sent; :meth:`run` and :meth:`reference` both call
    :meth:`solve`, so the pooled run equals the reference by construction.
    ``instead`` names the federated protocols to use when the data is split.
    """

    partition_kinds: ClassVar[tuple[str, ...]] = ("horizontal",)
    default_partition: ClassVar[str] = "horizontal:parties=1"
    uses_backend: ClassVar[bool] = False
    backend_note: ClassVar[str] = "it is centralized: one party holds everything"
    instead: ClassVar[str] = "a federated protocol"

    @abstractmethod
    def solve(self, train: Dataset, test: Dataset, seed: int) -> Outcome:
        """The centralized computation on pooled ``train``, evaluated on ``test``."""

    def run(self, federation: Federation, backend: MaskingBackend,
            defenses: Sequence[Defense] = ()) -> Outcome:
        party, pooled = federation.pooled(type(self).__name__, self.instead)
        assert federation.test is not None  # pooled() refuses a federation without a test set
        with federation.network.compute(party.name):
            return self.solve(pooled, federation.test, federation.secret_seed)

    def reference(self, train: Dataset, test: Dataset, *, seed: int) -> Outcome:
        return self.solve(train, test, seed)


def check_operations(backend: type[MaskingBackend] | MaskingBackend, needed: Iterable[str], *,
                     who: str) -> None:
    """Refuse a backend that lacks an operation, naming the backends that have it."""
    missing = sorted(set(needed) - set(backend.operations))
    if not missing:
        return
    lines = []
    for op in missing:
        having = sorted(n for n, c in backends.classes().items() if op in c.operations)
        lines.append(f"{op!r} (available in: {', '.join(having) or 'no registered backend'})")
    raise CapabilityError(
        f"{who} needs operation(s) the {backend.name!r} backend lacks: {'; '.join(lines)}."
    )


class Attack(Component, ABC):
    """Reads a View and returns a Reconstruction.

    ``needs_tags`` are message tags the attack reads; a View without any of
    them makes the attack not applicable, with the reason stated. Every subclass's
    :meth:`run` checks that first (:meth:`check`, put in front of it when the class is
    defined): an attack's own ``run`` starts from a View it applies to.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        run = cls.__dict__.get("run")
        if run is not None and not getattr(run, "__isabstractmethod__", False) \
                and not getattr(run, "_checks_view", False):
            cls.run = _checked(run)  # type: ignore[method-assign,assignment]

    kind = "attack"
    progress_hook: ProgressHook | None = None
    """Set by whoever runs the attack (the CLI) to follow its long loops; an attack only
    reports to it (:meth:`report_progress`), it reads nothing but its View."""
    default_scorer: ClassVar[str] = "reconstruction-error"
    needs_tags: ClassVar[frozenset[str]] = frozenset()
    needs_any_tags: ClassVar[frozenset[str]] = frozenset()
    closed_form: ClassVar[bool] = False
    """True for an attack without iterations (a solve, a read-out): it converges by
    construction. An iterative attack reports how its optimiser ended instead, as
    ``info["convergence"]`` of its Reconstruction (:mod:`fedsec.convergence`); one that
    reports neither is "not reported", and no verdict of protection is drawn from it."""
    budget_params: ClassVar[tuple[str, ...]] = ()
    """The integer parameters that set an iterative attack's budget (steps, epochs, sweeps):
    the strength benchmark runs the attack at ten times each
    (``tests/benchmarks/bench_attack_strength.py``)."""
    starts_params: ClassVar[tuple[str, ...]] = ()
    """The integer parameters that set how many starting points it tries (restarts)."""
    produces: ClassVar[str] = ""
    """The kind of estimate its Reconstruction holds (a key of :data:`ESTIMATE_KINDS`); empty:
    any kind its default scorer reads, so only a scorer reading all of them is sure to fit."""

    @classmethod
    def capabilities(cls) -> dict[str, Any]:
        return {"default_scorer": cls.default_scorer, "needs_tags": sorted(cls.needs_tags),
                "produces": cls.produces,
                "closed_form": cls.closed_form, "budget_params": list(cls.budget_params),
                "needs_any_tags": sorted(cls.needs_any_tags)}

    @classmethod
    def applies_to(cls, protocol: type[Protocol]) -> bool:
        """Whether ``protocol``'s transcripts can carry what this attack reads (declared data).

        By default: the protocol exposes every tag in ``needs_tags`` and, when
        ``needs_any_tags`` is set, at least one of those.
        """
        if not cls.needs_tags <= protocol.exposes:
            return False
        return not cls.needs_any_tags or bool(cls.needs_any_tags & protocol.exposes)

    def not_applicable(self, view: View) -> str | None:
        """Why this attack cannot run on ``view``, or None when it can.

        It needs every tag in ``needs_tags`` and at least one in ``needs_any_tags``; once
        those are observed, whatever else it needs is :meth:`unmet`'s to say. A subclass
        states its own conditions there (one that overrides this method instead, as a
        plug-in may, works as well).
        """
        observed = view.tags()
        missing = sorted(self.needs_tags - observed)
        if missing:
            return (f"{view.threat} observed no message tagged {', '.join(missing)}; "
                    f"it observed: {', '.join(sorted(observed)) or 'nothing'}")
        if self.needs_any_tags and not self.needs_any_tags & observed:
            return (f"{view.threat} observed no message tagged "
                    f"{' or '.join(sorted(self.needs_any_tags))}")
        return self.unmet(view)

    def unmet(self, view: View) -> str | None:
        """What else the attack needs that ``view`` lacks (a client it can read, a key
        share, a known record), asked by :meth:`not_applicable` once the tags it needs are
        observed; None when nothing is missing (the default)."""
        return None

    def seed_for(self, view: View) -> int:
        """The seed of the attack's own random stream on ``view``: its ``seed`` parameter
        when one is given, else the run's public seed (:attr:`View.run_seed`), else 0.

        The same View and parameters give the same seed, so the attack's output stays a
        function of them; two runs of other seeds start it from other points.
        """
        given = getattr(self.params, "seed", None)
        if given is not None:
            return int(given)
        return 0 if view.run_seed is None else view.run_seed

    def check(self, view: View) -> None:
        """Raise CapabilityError when the attack is not applicable to ``view``."""
        reason = self.not_applicable(view)
        if reason is not None:
            raise CapabilityError(f"Attack {self.name!r} does not apply: {reason}.")

    def report_progress(self, done: int, total: int, unit: str, *, label: str = "",
                        final: bool = False) -> None:
        """``done`` of ``total`` (iterations, steps: ``unit``) of ``label`` (the attack's
        name by default) to :attr:`progress_hook`, when one is set."""
        if self.progress_hook is not None:
            self.progress_hook(Progress(label or self.name, done, total, unit, final=final))

    @abstractmethod
    def run(self, view: View) -> Reconstruction:
        """Reconstruct what the view allows."""


def _checked(run: Callable[[Attack, View], Reconstruction]
             ) -> Callable[[Attack, View], Reconstruction]:
    """``run`` after :meth:`Attack.check` of its View."""

    @functools.wraps(run)
    def checked(self: Attack, view: View) -> Reconstruction:
        self.check(view)
        return run(self, view)

    checked._checks_view = True  # type: ignore[attr-defined]
    return checked


class Defense(Component):
    """Changes a protocol's configuration or transforms messages at declared points.

    A defence that only sets protocol parameters declares them in :attr:`sets`
    (from its own parameters) and :attr:`fixes` (constants); override
    :meth:`configure` for anything else, and :meth:`transform` to alter a
    party's payload before it is sent under one of the tags in ``points``
    (``*`` for any tag the protocol lets defences touch). A defence that adds
    noise declares its :meth:`mechanism` for the privacy accountant.
    """

    kind = "defense"
    protocols: ClassVar[frozenset[str]] = frozenset()
    points: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def capabilities(cls) -> dict[str, Any]:
        return {"protocols": sorted(cls.protocols), "points": sorted(cls.points)}

    sets: ClassVar[Mapping[str, str]] = {}
    """Protocol parameters this defence sets from its own: ``{protocol_param: own_param}``."""
    fixes: ClassVar[Mapping[str, Any]] = {}
    """Protocol parameters this defence sets to a constant."""

    def configure(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Protocol parameters after this defence: ``params`` with :attr:`sets` and
        :attr:`fixes` applied (unchanged by default)."""
        own = {key: getattr(self.params, name) for key, name in self.sets.items()}
        return {**params, **own, **self.fixes}

    def transform(self, party: Party, tag: str, values: np.ndarray) -> np.ndarray:
        """The payload ``party`` sends under ``tag`` after this defence (unchanged by default)."""
        return values

    def mechanism(self, protocol_params: Mapping[str, Any]) -> Mechanism | None:
        """The noise this defence adds, as an accountant reads it
        (:class:`~fedsec.privacy.mechanism.Mechanism`), given the protocol's parameters as
        the defences configured them; None: it adds no noise (the default).

        A defence that adds noise declares it here, with the sensitivity it relies on (None
        when it clips nothing and no bound is declared: then no epsilon is stated).
        """
        return None


def apply_transforms(defenses: Sequence[Defense], party: Party, tag: str,
                     values: np.ndarray) -> np.ndarray:
    """Pass ``values`` through every defence that acts on ``tag``, in order."""
    for defense in defenses:
        if tag in defense.points or "*" in defense.points:
            values = defense.transform(party, tag, values)
    return values


class Scorer(Component, ABC):
    """Compares a Reconstruction with the ground truth.

    ``glossary`` defines, in a sentence each, the metrics the scorer reports (reports show
    the definitions of the metrics they use; ``baseline_NAME`` is NAME for the baseline).
    ``recovers`` says what a high score means was recovered, with ``{what}`` standing for the
    targets in words (for example ``"the column space of {what}"``).
    """

    kind = "scorer"
    glossary: ClassVar[Mapping[str, str]] = {}
    recovers: ClassVar[str] = "{what}"
    reads: ClassVar[frozenset[str]] = frozenset()
    """The kinds of estimate it can score (keys of :data:`ESTIMATE_KINDS`); empty: any (a scorer
    that declares nothing is not checked against its attacks)."""

    @classmethod
    def capabilities(cls) -> dict[str, Any]:
        return {"reads": sorted(cls.reads), "metrics": sorted(cls.glossary)}

    @abstractmethod
    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        """Leakage metrics, each next to its naive baseline."""


__all__ = ["ESTIMATE_KINDS", "Attack", "AttackSeed", "Component", "Defense", "MaskingBackend",
           "Protocol", "Scorer", "apply_transforms", "check_operations"]
