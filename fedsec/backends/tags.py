"""The masking backends' transcript contract: the tags, metadata keys and key ids their own
messages carry (setup, key shares, dropout recovery).

The ``noise`` backend sends these; the attacks on its messages
(:mod:`fedsec.attacks.mask_shares`) read them. Nothing else types one: import the
constant, or build a key id with the functions below. A protocol's payloads travel under the
protocol's own tags (``secure_sum.contribution``).

A dropout-tolerant sum (``noise`` with ``threshold`` >= 2; Bonawitz et al., CCS 2017, on
SecAgg+'s graph, Bell et al., CCS 2020) sends, in order:

1. :data:`KEYS`, :data:`KEYS_FORWARD` (phase ``advertise_keys``): each sender's two X25519
   public keys to the aggregator, which forwards to each sender those of the parties it
   shares keys with;
2. :data:`SHARES`, :data:`SHARES_FORWARD` (phase ``share_keys``): each sender's Shamir shares
   of its mask key and self-mask seed, each sealed to its holder, through the aggregator;
3. the protocol's masked contributions, from the senders that did not drop;
4. :data:`UNMASK_REQUEST`, :data:`UNMASK_SHARES` (phase ``unmask``): the aggregator names
   the senders that dropped and those that did not; each survivor returns its shares of the
   dropped senders' mask keys and of the survivors' self-mask seeds.
"""

from __future__ import annotations

# -- tags --------------------------------------------------------------------------------------
GRAPH = "noise.graph"
"""The seed of a sparse mask graph's order, from the receiver to every sender, in the clear."""
KEYS = "noise.keys"
"""A sender's public keys of one sum (X25519: mask key, then seal key; 64 bytes), to the
aggregator, in the clear."""
KEYS_FORWARD = "noise.keys.forward"
"""The public keys of the parties a sender shares keys with (:data:`PARTIES` order, 64 bytes
each), from the aggregator to that sender."""
SHARES = "noise.shares"
"""A sender's sealed Shamir shares, one record per holder (:data:`TO`), to the aggregator:
each opens only with its holder's seal key."""
SHARES_FORWARD = "noise.shares.forward"
"""The sealed shares addressed to one holder (:data:`FROM`: whose), from the aggregator to
it."""
UNMASK_REQUEST = "noise.unmask.request"
"""The aggregator asks a surviving sender for its shares: :data:`SELF_MASKS` (senders whose
contributions arrived) and :data:`MASK_KEYS` (senders that dropped)."""
UNMASK_SHARES = "noise.unmask.shares"
"""A survivor's shares (33 bytes each, big-endian field elements): of each
:data:`SELF_MASKS` sender's self-mask seed, then of each :data:`MASK_KEYS` sender's mask
key, in the order listed; in the clear to the aggregator."""

# -- metadata keys -----------------------------------------------------------------------------
ROUND = "round"
"""The label of one dropout-tolerant sum: every key id of the sum ends with it."""
PARTIES = "parties"
"""The parties whose public keys a :data:`KEYS_FORWARD` payload holds, in order."""
FROM = "from"
"""Per sealed record: the sender whose shares it holds."""
TO = "to"
"""Per sealed record: the holder it is sealed to."""
SENDER_KEYS = "sender_keys"
"""Per sealed record: its sender's public seal key (hex), which opens it with the holder's
private seal key."""
SEALED = "sealed"
"""How the records are sealed (:data:`fedsec.backends.sealing.SCHEME`)."""
POINT = "x"
"""The Shamir point (x-coordinate) of the shares a holder holds or sends."""
SELF_MASKS = "self_masks"
"""The senders whose self-mask seeds' shares are asked for or sent."""
MASK_KEYS = "mask_keys"
"""The senders whose mask keys' shares are asked for or sent (those that dropped)."""
THRESHOLD = "threshold"
"""The Shamir threshold of the sum."""


# -- key ids -----------------------------------------------------------------------------------
def mask_key_id(party: str, label: str) -> str:
    """``party``'s X25519 private key of the sum ``label`` for its pairwise masks."""
    return f"noise:secagg:{label}:mask:{party}"


def seal_key_id(party: str, label: str) -> str:
    """``party``'s X25519 private key of the sum ``label`` that opens shares sealed to it."""
    return f"noise:secagg:{label}:seal:{party}"


def self_key_id(party: str, label: str) -> str:
    """``party``'s self-mask seed (an AES-128 key) of the sum ``label``."""
    return f"noise:secagg:{label}:self:{party}"


def pair_key_id(a: str, b: str, label: str) -> str:
    """The mask key two senders agree in the sum ``label`` (order-free)."""
    first, second = sorted((a, b))
    return f"noise:secagg:{label}:pair:{first}:{second}"
