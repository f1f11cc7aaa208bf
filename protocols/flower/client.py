"""The ClientApp side of the recorder: a wrapper around the whole app and a mod for the truth.

- :class:`RecordedClientApp` wraps a ClientApp from outside (fedsec places it when it runs
  the app): it hands the app fedsec's run config and logs the digest of every message the
  client received and of every reply it sent, after all of the app's mods, i.e. exactly
  what crossed. fedsec checks these logs against the ServerApp's transcript.
- :func:`record_plaintext` is a Flower mod (``ClientApp(mods=[..., record_plaintext])``):
  placed *before* protection (after ``secaggplus_mod`` or a DP mod in the list, so nearer the
  app), it sees the reply the app produced and records the client's plaintext update to the
  run's private store; placed first in the list it sees what the other mods made of it.
- :func:`expose_data` lets an app name the rows and labels it trains on, as ground truth.

Outside a fedsec run (no spool in the run config) all three pass messages through unchanged.
Nothing here imports Flower: they read messages by their public attributes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from fedsec.protocols.flower import records, spool, tags

PARTITION_ID = "partition-id"
"""Flower's node-config key of a simulated client's partition."""


class RecordedClientApp:
    """``client_app`` with fedsec's run config and a log of what crossed (a callable that
    Flower's engines run like a ClientApp)."""

    def __init__(self, client_app: Any, run_config: Mapping[str, Any]) -> None:
        self.client_app = client_app
        self.run_config = dict(run_config)

    def __call__(self, message: Any, context: Any) -> Any:
        # the engine refuses a context whose run config changed: fedsec's entries are there
        # only while the app runs
        original = dict(context.run_config)
        context.run_config.update(self.run_config)
        try:
            return self._call(message, context)
        finally:
            context.run_config.clear()
            context.run_config.update(original)

    def _call(self, message: Any, context: Any) -> Any:
        where = spool.spool_of(self.run_config)
        if where is None:
            return self.client_app(message=message, context=context)
        log = where / spool.CLIENTS / f"{context.node_id}.jsonl"
        partition = context.node_config.get(PARTITION_ID)
        spool.append_line(log, {"event": "received", "message_id": message.metadata.message_id,
                                "partition_id": partition,
                                "digest": records.content_digest(message)})
        reply = self.client_app(message=message, context=context)
        spool.append_line(log, {"event": "sent", "reply_to": message.metadata.message_id,
                                "partition_id": partition,
                                "digest": records.content_digest(reply)})
        return reply


def record_plaintext(message: Any, context: Any, call_next: Callable[[Any, Any], Any]) -> Any:
    """Flower mod: record the client's plaintext update of each ``train`` message.

    The update is the reply's arrays minus the instruction's (array by array, matched by
    record key and name, a legacy ``fitres`` record by its ``fitins`` one; an array the
    instruction lacks counts in full), flattened to
    float64 in the reply's order (:data:`.tags.UPDATE`); the reply's arrays themselves are
    kept too (:data:`.tags.MODEL`). The reply goes on unchanged.
    """
    reply = call_next(message, context)
    where = spool.spool_of(context.run_config)
    if (where is None or not str(message.metadata.message_type).startswith(tags.TRAIN)
            or reply.has_error()):
        return reply
    sent = {(key, name): value for key, _, name, value in records.arrays_of(message.content)}
    update, model, layout = [], [], []
    for key, _, name, value in records.arrays_of(reply.content):
        own = np.asarray(value, dtype=np.float64).ravel()
        before = sent.get((tags.LEGACY_INSTRUCTION_RECORD.get(key, key), name))
        same = before is not None and before.shape == value.shape
        update.append(own - np.asarray(before, dtype=np.float64).ravel() if same else own)
        model.append(own)
        layout.append([key, name, value.dtype.str, list(value.shape)])
    empty = np.zeros(0)
    spool.save_arrays(
        where / spool.TRUTH / f"{context.node_id}-{message.metadata.message_id}.npz",
        {tags.UPDATE: np.concatenate(update) if update else empty,
         tags.MODEL: np.concatenate(model) if model else empty},
        {"node_id": str(context.node_id), "round": records.round_of(message),
         "message_id": str(message.metadata.message_id), "layout": layout,
         "partition_id": context.node_config.get(PARTITION_ID)})
    return reply


def expose_data(context: Any, X: np.ndarray, y: np.ndarray | None = None) -> None:
    """Record the rows (and labels) the client trains on as its ground truth, once per node.

    Call it from a ClientApp's ``train`` function; outside a fedsec run it does nothing.
    """
    where = spool.spool_of(context.run_config)
    if where is None:
        return
    path = where / spool.DATA / f"{context.node_id}.npz"
    if path.exists():
        return
    arrays = {"X": np.asarray(X)}
    if y is not None:
        arrays["y"] = np.asarray(y)
    spool.save_arrays(path, arrays, {"node_id": str(context.node_id)})


def client_seed(context: Any) -> int | None:
    """This client's own seed in a fedsec run (its batch order, its dropout, any secret it
    draws), from the run's secret seed through the spool, where only this client looks; None
    outside a fedsec run. Seed nothing a client keeps from the run config's ``fedsec-seed``:
    every process of the run, the ServerApp's included, reads the run config."""
    where = spool.spool_of(context.run_config)
    partition = context.node_config.get(PARTITION_ID)
    if where is None or partition is None:
        return None
    return spool.load_seed(where, int(partition))
