"""Threat models: who the adversary is and what it observes.

Three shapes, written as short strings on the command line and in audits:

* ``server`` — one honest-but-curious party;
* ``server,party1`` — a coalition that pools what its members saw and hold;
* ``eavesdropper:party1->server,party2<->server`` — an outsider tapping the
  listed links (``->`` one direction, ``<->`` both, ``*`` every link). It
  holds no keys, so every protected payload is opaque to it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from fedsec.errors import UnknownNameError, ValidationError

PARTY = "party"
COALITION = "coalition"
EAVESDROPPER = "eavesdropper"


@dataclass(frozen=True)
class ThreatModel:
    """An adversary: a party, a coalition of parties, or an eavesdropper on links.

    Examples
    --------
    >>> ThreatModel.parse("server,party1").members
    ('server', 'party1')
    >>> ThreatModel.parse("eavesdropper:a<->b").links
    (('a', 'b'), ('b', 'a'))
    """

    kind: str
    members: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, spec: str) -> ThreatModel:
        """Build a threat model from its short string form."""
        text = spec.strip()
        if not text:
            raise ValidationError(
                "A threat model must name a party, a coalition 'a,b' or "
                "'eavesdropper:a->b'. Got an empty string instead."
            )
        if text.startswith(EAVESDROPPER):
            _, _, rest = text.partition(":")
            if not rest.strip():
                raise ValidationError(
                    f"The eavesdropper in {spec!r} taps no link; write "
                    "'eavesdropper:a->b,c<->d' or 'eavesdropper:*'."
                )
            return cls(kind=EAVESDROPPER, links=_parse_links(rest, spec))
        members = tuple(p.strip() for p in text.split(","))
        if any(not m for m in members):
            raise ValidationError(f"The coalition {spec!r} has an empty member name.")
        if len(set(members)) != len(members):
            raise ValidationError(f"The coalition {spec!r} names a party twice.")
        return cls(kind=PARTY if len(members) == 1 else COALITION, members=members)

    def check_parties(self, parties: Iterable[str]) -> None:
        """Refuse names that are not parties of the run, listing the valid ones."""
        known = set(parties)
        names = list(self.members) + [p for link in self.links for p in link if p != "*"]
        for name in names:
            if name not in known:
                raise UnknownNameError("party", name, known)

    def observes(self, sender: str, receiver: str) -> bool:
        """Whether a message on this link is seen by the adversary."""
        if self.kind == EAVESDROPPER:
            return any(
                (a in ("*", sender)) and (b in ("*", receiver)) for a, b in self.links
            )
        return sender in self.members or receiver in self.members

    def __str__(self) -> str:
        if self.kind == EAVESDROPPER:
            return EAVESDROPPER + ":" + ",".join(f"{a}->{b}" for a, b in self.links)
        return ",".join(self.members)


def _parse_links(text: str, spec: str) -> tuple[tuple[str, str], ...]:
    links: list[tuple[str, str]] = []
    for part in (p.strip() for p in text.split(",")):
        if part == "*":
            links.append(("*", "*"))
            continue
        both = "<->" in part
        a, sep, b = part.partition("<->" if both else "->")
        a, b = a.strip(), b.strip()
        if not sep or not a or not b:
            raise ValidationError(
                f"The link {part!r} in {spec!r} is not 'a->b', 'a<->b' or '*'."
            )
        links.append((a, b))
        if both:
            links.append((b, a))
    return tuple(links)
