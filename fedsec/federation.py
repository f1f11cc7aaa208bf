"""Parties and the federation they form for one run."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fedsec.errors import CapabilityError, UnknownNameError, ValidationError
from fedsec.keys import KeyStore, fingerprint
from fedsec.network import Network
from fedsec.private_store import truth_key
from fedsec.progress import Progress, ProgressHook
from fedsec.seeding import generator

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data import Dataset
    from fedsec.partition import Partition, Shard


@dataclass(eq=False)
class Party:
    """A participant: its name, role, private shard, own random stream and keys.

    ``private`` holds values the party computes and keeps (its local
    statistics, its model share); they are part of the ground truth an audit
    scores against and of what the party knows when it is the adversary.
    """

    name: str
    role: str
    shard: Shard | None
    rng: np.random.Generator
    keys: KeyStore
    private: dict[str, np.ndarray] = field(default_factory=dict)

    def held_shard(self) -> Shard:
        """The party's shard; a coordinator, which holds none, raises."""
        if self.shard is None:
            raise ValidationError(
                f"Party {self.name!r} (role {self.role!r}) holds no data: it is a coordinator.")
        return self.shard

    def knowledge(self) -> dict[str, np.ndarray | bytes]:
        """Everything this party privately holds, flattened to named arrays and bytes."""
        out: dict[str, np.ndarray | bytes] = {}
        if self.shard is not None:
            out.update({f"shard/{k}": v for k, v in self.shard.arrays().items()})
        out.update({f"key/{k}": v for k, v in self.keys.export().items()})
        out.update({f"value/{k}": np.asarray(v) for k, v in self.private.items()})
        return out


class Federation:
    """The parties of one run, the network between them, and the run's seeds.

    Build it with :meth:`from_partition`. The test set, when given, belongs
    to the evaluator, not to any party: protocols use it only to measure their
    model.

    ``seed`` is the run's public seed (it split and partitioned the rows; a scenario names
    it, so every adversary may know it). ``secret_seed`` is the root of every random choice
    a party makes and keeps: protocols, backends and defences draw from it (through the
    parties' ``rng`` or :func:`fedsec.seeding.generator`), never from ``seed``.
    """

    def __init__(
        self, *, parties: Mapping[str, Party], network: Network, seed: int, secret_seed: int,
        partition: Partition | None = None, test: Dataset | None = None,
    ) -> None:
        self.parties = dict(parties)
        self.network = network
        self.seed = seed
        self.secret_seed = secret_seed
        self.partition = partition
        self.test = test
        self.log_folder: Path | None = None
        """Where a protocol that runs processes of its own keeps their logs (``OUT/parties``
        when the run writes to a folder; None in memory)."""
        self.progress: Callable[[str], None] | None = None
        self.on_progress: ProgressHook | None = None
        self._last_report = 0.0

    def report(self, message: str, *, every: float = 2.0) -> None:
        """Tell whoever runs the protocol how a long run goes (``fedsec run`` prints it);
        at most one message every ``every`` seconds, and nothing when nobody listens."""
        if self.progress is None:
            return
        now = time.monotonic()
        if now - self._last_report >= every:
            self._last_report = now
            self.progress(message)

    def advance(self, label: str, done: int, total: int, unit: str, *,
                final: bool = False) -> None:
        """Tell whoever runs the protocol that ``done`` of ``total`` (counted in ``unit``) of
        ``label`` are done (:class:`~fedsec.progress.Progress`; ``fedsec run`` draws a bar).
        Nothing when nobody listens; never part of the transcript."""
        if self.on_progress is not None:
            self.on_progress(Progress(label, done, total, unit, final=final))

    @classmethod
    def from_partition(
        cls, partition: Partition, train: Dataset, *, seed: int, secret_seed: int,
        network: Network, test: Dataset | None = None,
    ) -> Federation:
        """One party per partition party, each with its shard of ``train`` and its own stream
        drawn from ``secret_seed``."""
        parties = {}
        for name in partition.parties:
            is_coordinator = name in partition.coordinators
            parties[name] = Party(
                name=name, role=partition.roles[name],
                shard=None if is_coordinator else partition.shard(name, train.X, train.y),
                rng=generator(secret_seed, f"party/{name}"), keys=KeyStore(name),
            )
        return cls(parties=parties, network=network, seed=seed, secret_seed=secret_seed,
                   partition=partition, test=test)

    def the_partition(self) -> Partition:
        """The partition the run was built from (:meth:`from_partition` always sets it)."""
        if self.partition is None:
            raise ValidationError(
                "The federation has no partition: build it with Federation.from_partition.")
        return self.partition

    def test_set(self) -> Dataset:
        """The evaluator's test set; a federation built without one raises."""
        if self.test is None:
            raise ValidationError(
                "The protocol measures its model on the test set, but the federation has none.")
        return self.test

    @property
    def names(self) -> tuple[str, ...]:
        """Party names in a stable order."""
        return tuple(self.parties)

    def party(self, name: str) -> Party:
        """The party called ``name``."""
        try:
            return self.parties[name]
        except KeyError:
            raise UnknownNameError("party", name, self.parties) from None

    def by_role(self, role: str) -> list[Party]:
        """Parties with ``role``, in order."""
        return [p for p in self.parties.values() if p.role == role]

    def data_parties(self) -> list[Party]:
        """Parties that hold a shard."""
        return [p for p in self.parties.values() if p.shard is not None]

    def pooled(self, who: str, instead: str) -> tuple[Party, Dataset]:
        """The one party of a centralized reference and its data, in the training set's order
        (with the test set's feature groups when the party holds every column).

        ``who`` names the protocol and ``instead`` the federated alternative for
        the error raised when more than one party holds data.
        """
        from fedsec.data import Dataset

        data = self.data_parties()
        if len(data) != 1:
            raise ValidationError(
                f"{who} is centralized: it needs one party holding all data, got {len(data)}. "
                f"Use --partition horizontal:parties=1, or {instead}."
            )
        party = data[0]
        assert party.shard is not None  # data_parties() keeps only parties holding a shard
        (cell,) = party.shard.cells
        if cell.y is None:
            raise ValidationError(
                f"{who} is centralized: its party {party.name!r} must hold the labels, but it "
                "holds none."
            )
        if self.test is None:
            raise ValidationError(
                f"{who} takes the task and class names from the test set, but the federation "
                "has none."
            )
        order = np.argsort(cell.rows)  # the training set's row order
        groups = (self.test.feature_groups
                  if np.array_equal(cell.columns, np.arange(self.test.n_features)) else {})
        return party, Dataset(name="pooled", X=cell.X[order], y=cell.y[order],
                              task=self.test.task, class_names=self.test.class_names,
                              feature_groups=groups)

    def share_key(
        self, owner: str, key_id: str, material: bytes, *, to: Iterable[str] = (),
        public: bool = False, meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Give ``owner`` a key and send it to each party in ``to``, through the network.

        The transcript shows who holds what. Public material is logged in full
        once, in the owner's own record; each delivery, and anything about
        secret material, shows only the fingerprint (deliveries still count
        the material's real size on the wire).
        """
        self.hold_key(owner, key_id, material, public=public, meta=meta)
        self.deliver_key(owner, key_id, material, to=to, public=public, meta=meta)

    def deliver_key(
        self, owner: str, key_id: str, material: bytes, *, to: Iterable[str],
        public: bool = False, meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Send a key ``owner`` holds already to each party in ``to`` (the deliveries of
        :meth:`share_key`: the fingerprint on the wire, the material's size counted)."""
        info = {"fingerprint": fingerprint(material), "public": public, **(meta or {})}
        shown = bytes.fromhex(info["fingerprint"])
        for receiver in to:
            got = self.network.send(owner, receiver, "key.share", shown,
                                    protection="plain" if public else "secret", key_id=key_id,
                                    meta=info, size=len(material))
            if bytes(got) != shown:  # the receiver checks what it got against the key
                raise CapabilityError(
                    f"The key {key_id} delivered to {receiver} does not match {owner}'s: it was "
                    "altered in transit (a man in the middle); the run cannot go on.")
            self.party(receiver).keys.put(key_id, material, public=public)

    def hold_key(
        self, party: str, key_id: str, material: bytes, *, public: bool = False,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Record that ``party`` holds a key it made or derived itself (no traffic).

        The record carries the public material in full, or only the
        fingerprint of secret material.
        """
        info = {"fingerprint": fingerprint(material), "public": public, **(meta or {})}
        self.party(party).keys.put(key_id, material, public=public)
        shown = bytes(material) if public else bytes.fromhex(info["fingerprint"])
        self.network.send(party, party, "key.hold", shown,
                          protection="plain" if public else "secret", key_id=key_id, meta=info,
                          size=0)

    def knowledge(self) -> dict[str, np.ndarray | bytes]:
        """Every party's private holdings, keyed ``party/NAME/...`` (the auditor's truth)."""
        out: dict[str, np.ndarray | bytes] = {}
        for name, party in self.parties.items():
            out.update({truth_key(name, *k.split("/")): v for k, v in party.knowledge().items()})
        return out
