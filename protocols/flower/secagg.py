"""The SecAgg+ side of the recorder: each client's own SecAgg+ secrets, as ground truth.

Flower's ``secaggplus_mod`` keeps a client's SecAgg+ state in the ClientApp's
``context.state`` (the ConfigRecord ``secaggplus_state``): its two key pairs, the seed of its
self mask and the shares it received. None of it crosses the wire, so the transcript cannot
hold it; but it is what a client that colludes with the server hands over. The mod
:func:`record_secagg_secrets`, placed *before* ``secaggplus_mod`` in the ClientApp's mods
(outermost), reads that state after each SecAgg+ stage and records the client's own secrets
(:data:`.tags.SECAGG_SECRETS`) to the spool; fedsec puts them in the client's private
holdings (``secagg/round<r>/<name>``), so a View of a coalition holds exactly its members'
secrets. The shares a client received are not recorded: a coalition decrypts them from the
ciphertexts the server forwarded (the transcript holds them) with its members' ``sk2``.

Outside a fedsec run (no spool in the run config) the mod passes messages through. Nothing
here imports Flower.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fedsec.protocols.flower import records, spool, tags

STATE_RECORD = "secaggplus_state"
"""The ConfigRecord of ``context.state`` where ``secaggplus_mod`` keeps a client's state."""


def record_secagg_secrets(message: Any, context: Any,
                          call_next: Callable[[Any, Any], Any]) -> Any:
    """Flower mod: record the client's own SecAgg+ secrets of each round (``sk1``, ``sk2``,
    ``rd_seed``, and its public keys), once ``secaggplus_mod`` has drawn them.

    Place it first in ``mods`` (before ``secaggplus_mod``): it reads the state that mod
    saved after answering. The reply goes on unchanged.
    """
    reply = call_next(message, context)
    where = spool.spool_of(context.run_config)
    if where is None or str(message.metadata.message_type) != tags.TRAIN:
        return reply
    state = context.state.config_records.get(STATE_RECORD)
    if state is None or not state.get("rd_seed"):
        return reply  # no SecAgg+ here, or the seed is not drawn yet (setup stage)
    secrets = {name: np.frombuffer(bytes(state[name]), dtype=np.uint8)
               for name in tags.SECAGG_SECRETS}
    server_round = records.round_of(message)
    spool.save_arrays(where / spool.SECRETS / f"{context.node_id}-round{server_round}.npz",
                      secrets, {"node_id": str(context.node_id), "round": server_round})
    return reply
