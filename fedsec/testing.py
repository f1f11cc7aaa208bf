"""Public conformance checks for protocols, backends, attacks, defences and scorers.

Third-party components can run the same checks the built-ins pass, in the
style of scikit-learn's ``check_estimator``::

    from fedsec.testing import check_protocol
    check_protocol(MyProtocol)

Each check raises ``AssertionError`` with a message saying what failed.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fedsec import registry
from fedsec.convergence import of_attack
from fedsec.errors import ValidationError
from fedsec.federation import Federation, Party
from fedsec.interfaces import Attack, Defense, MaskingBackend, Protocol, Scorer
from fedsec.keys import KeyStore
from fedsec.network import Network
from fedsec.runner import RunConfig, RunResult, run
from fedsec.seeding import generator, new_secret_seed
from fedsec.transcript import Message, Transcript, TranscriptWriter, read_transcript
from fedsec.transcript.payload import encode
from fedsec.views import build_view

_UNKNOWN_PARAM = "no_such_parameter_xyz"


def small_federation(n_senders: int, seed: int = 0, extra: tuple[str, ...] = ()) -> Federation:
    """Parties ``p00``.. (clients) and ``agg`` (aggregator), plus ``extra`` observers, no data.

    For testing a backend or a building block on its own: every party has its
    own stream from ``seed`` (which is also the federation's secret seed: nothing here is
    secret) and an empty key store; messages are recorded in memory.
    """
    names = [f"p{i:02d}" for i in range(n_senders)]
    roles = {**{n: "client" for n in names}, "agg": "aggregator", **{e: "observer" for e in extra}}
    network = Network(TranscriptWriter({"parties": roles}), roles)
    parties = {n: Party(name=n, role=r, shard=None, rng=generator(seed, n), keys=KeyStore(n))
               for n, r in roles.items()}
    return Federation(parties=parties, network=network, seed=seed, secret_seed=seed)


def check_rejects_unknown_parameter(cls: type) -> None:
    """Constructing with an unknown parameter raises a ValidationError naming it."""
    try:
        cls(**{_UNKNOWN_PARAM: 1})
    except ValidationError as error:
        assert _UNKNOWN_PARAM in str(error), f"{cls.__name__}: error does not name the parameter"
        return
    raise AssertionError(f"{cls.__name__} accepted an unknown parameter {_UNKNOWN_PARAM!r}")


def assert_same_transcript(a: Transcript, b: Transcript) -> None:
    """Two transcripts are identical except for timing."""
    assert dict(a.header) == dict(b.header), "headers differ"
    assert len(a) == len(b), f"{len(a)} messages versus {len(b)}"
    for x, y in zip(a.messages, b.messages, strict=True):
        assert _chained(x) == _chained(y), f"message {x.seq} ({x.tag}) differs between the runs"
    assert a.footer == b.footer, "end records differ"  # the chain values among them


def assert_secret_unseen(transcript: Transcript, secret_seed: int) -> None:
    """No message and no header field carries the run's secret seed in any plain encoding
    (decimal, hexadecimal, 16 bytes either way round): what every View is made of holds
    nothing to regenerate the parties' secrets from."""
    forms = [str(secret_seed).encode(), f"{secret_seed:x}".encode(),
             secret_seed.to_bytes(16, "little"), secret_seed.to_bytes(16, "big")]
    header = json.dumps(dict(transcript.header), sort_keys=True, default=str).encode()
    for form in forms:
        assert form not in header, "the header holds the secret seed"
    for m in transcript.messages:
        carried = b"%b\x00%b" % (encode(m.payload)[3], m.meta_json.encode())
        for form in forms:
            assert form not in carried, f"message {m.seq} ({m.tag}) carries the secret seed"


def _chained(m: Message) -> tuple[Any, ...]:
    """What the chain covers of a message: every field but the timings, the payload's bytes."""
    return (m.seq, m.round, m.phase, m.sender, m.receiver, m.tag, m.kind, m.protection,
            m.key_id, m.dtype, m.shape, m.size, m.meta_json, encode(m.payload)[3], m.digest)


def check_protocol(cls: type[Protocol], *, dataset: str | None = None,
                   partition: str | None = None, backend: str = "plain",
                   seed: int = 0, params: Mapping[str, Any] | None = None) -> RunResult:
    """Same seeds → same transcript (the secret seed a fresh random one, given to both runs);
    transcript round-trips; federated = centralized.

    Returns the first run's result for further checks.
    """
    check_rejects_unknown_parameter(cls)
    name = _registered_name("protocol", cls)
    secret = new_secret_seed()
    config = RunConfig(protocol=name, dataset=dataset, partition=partition, backend=backend,
                       seed=seed, secret_seed=secret, params=dict(params or {}))
    with tempfile.TemporaryDirectory() as tmp:
        first = run(config, Path(tmp) / "a")
        second = run(config)
        assert_same_transcript(first.transcript, second.transcript)
        assert_secret_unseen(first.transcript, secret)
        loaded = read_transcript(Path(tmp) / "a" / "transcript.arrow")
        assert_same_transcript(first.transcript, loaded)
        report = loaded.verify()
        assert report.ok, f"{name}: saved transcript fails verification: {report.summary()}"
        for x, y in zip(first.transcript.messages, loaded.messages, strict=True):
            _assert_same_payload(x.payload, y.payload, x.seq)
    comparison = first.record.comparison
    assert comparison.agrees, f"{name}: federated result differs from centralized: {comparison}"
    return first


def check_backend(cls: type[MaskingBackend], *, n_parties: int = 4, length: int = 16,
                  seed: int = 0) -> None:
    """A secure sum through the backend equals the plaintext sum within its precision."""
    from fedsec.backends.primitives import secure_sum

    check_rejects_unknown_parameter(cls)
    backend = cls()
    federation = small_federation(n_parties, seed)
    network = federation.network
    rng = generator(seed, "check_backend")
    vectors = {p.name: rng.normal(size=length) for p in federation.by_role("client")}
    total = secure_sum(federation, backend, vectors, "agg")
    expected = np.sum(list(vectors.values()), axis=0)
    tol = 1e-9 if backend.exact else 1e-6
    assert np.allclose(total, expected, rtol=tol, atol=tol * np.abs(expected).max()), (
        f"{cls.__name__}: secure sum differs from the plaintext sum"
    )
    assert network.close().verify().ok


def check_attack(cls: type[Attack], *, seed: int = 0,
                 runs: Mapping[str, Mapping[str, Any]] | None = None,
                 knowledge: Callable[[RunResult, Path], Mapping[str, Any]] | None = None,
                 params: Mapping[str, Any] | None = None) -> None:
    """Bad parameters raise; the attack runs deterministically where its tags are observed
    (by a party alone or, for an attack that needs one, by a coalition of two or three), and
    reports its convergence (or declares itself a closed form).

    It is tried on each registered protocol it applies to (:meth:`Attack.applies_to`), run
    with its defaults or with the :class:`RunConfig` fields in ``runs[protocol]`` (a smaller
    dataset, for example). An attack that needs prior knowledge beyond the View (known
    records) gets its parameters from ``knowledge(result, folder)``, which may write files
    into ``folder``; ``params`` are further attack parameters (a small budget, for an attack
    whose defaults take minutes).
    """
    check_rejects_unknown_parameter(cls)
    for protocol_name, protocol_cls in registry.protocols.classes().items():
        if not cls.applies_to(protocol_cls):
            continue
        result = run(RunConfig(protocol=protocol_name, seed=seed,
                               **dict((runs or {}).get(protocol_name, {}))))
        with tempfile.TemporaryDirectory() as tmp:
            chosen = {**dict(params or {}),
                      **(dict(knowledge(result, Path(tmp))) if knowledge else {})}
            if _attack_runs_twice(cls, chosen, result):
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


#: Coalitions :func:`check_attack` tries at most per run (single parties first, then pairs,
#: then triples, in the transcript's party order).
COALITIONS_TRIED = 400


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


def _attack_runs_twice(cls: type[Attack], params: dict[str, Any], result: RunResult) -> bool:
    """Run the attack twice on the first adversary's view it applies to (a party, or the
    smallest coalition: :func:`coalitions`); False when none."""
    attack = cls(**params)
    for party in coalitions(list(result.transcript.parties)):
        view = build_view(result.transcript, party, result.private)
        if attack.not_applicable(view) is not None:
            continue
        a, b = attack.run(view), cls(**params).run(view)
        assert set(a.estimates) <= set(result.private), (
            f"{cls.__name__}: estimates name keys absent from the ground truth"
        )
        check_convergence_record(cls, a.info)
        for key in a.estimates:
            assert np.array_equal(a.estimates[key], b.estimates[key]), (
                f"{cls.__name__}: two runs on one view differ for {key}"
            )
        return True
    return False


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
    name = _registered_name("defense", cls)
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


def check_scorer(cls: type[Scorer]) -> None:
    """Bad parameters raise."""
    check_rejects_unknown_parameter(cls)


def _registered_name(kind: str, cls: type) -> str:
    for name, registered in registry.classes(kind).items():
        if registered is cls:
            return name
    return f"{cls.__module__}:{cls.__qualname__}"


def _assert_same_payload(a: Any, b: Any, seq: int) -> None:
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, (
            f"message {seq}: array layout differs after a round trip"
        )
        assert a.tobytes() == b.tobytes(), f"message {seq}: array bytes differ after a round trip"
    else:
        assert a == b, f"message {seq}: bytes differ after a round trip"
