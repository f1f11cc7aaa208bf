"""A Flower message as fedsec transcript rows: pure functions over Flower's record types.

:func:`message_rows` turns one ``flwr.app.Message`` into a head row and one row per array
(:mod:`.tags` says what each carries); :func:`content_digest` fingerprints a message's
content, so that what the ServerApp recorded can be checked against what each ClientApp
saw. Both read Flower's objects by their public attributes only (``metadata``,
``content.array_records``, ``config_records``, ``metric_records``, ``Array.numpy()``), so
this module imports nothing from Flower.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from blake3 import blake3

from fedsec.protocols.flower import tags
from fedsec.transcript.message import canonical_json

SERVER_ROUND = "server-round"
"""The ConfigRecord entry in which Flower's strategies send the round number."""


@dataclass(frozen=True)
class Row:
    """One transcript row of a Flower message (sender and receiver are named by the caller)."""

    tag: str
    payload: np.ndarray | bytes
    meta: dict[str, Any]
    size: int


def json_value(value: Any) -> Any:
    """A Config/MetricRecord value as JSON: numbers, strings and booleans as they are, bytes
    as ``{"hex": ...}``, lists element by element.

    >>> json_value([1, b"\\x01"])
    [1, {'hex': '01'}]
    """
    if isinstance(value, (bytes, bytearray)):
        return {"hex": bytes(value).hex()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _entries(records: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(key): {str(k): json_value(v) for k, v in record.items()}
            for key, record in records.items()}


def round_of(instruction: Any) -> int:
    """The fedsec round of an instruction: its ``group_id`` when that is a round number, else
    the ``server-round`` entry Flower's strategies put in its ConfigRecord, else 0."""
    group = str(instruction.metadata.group_id)
    if group.isdigit():
        return int(group)
    if not instruction.has_error():
        for record in instruction.content.config_records.values():
            value = record.get(SERVER_ROUND)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
    return 0


def secagg_stage_of(instruction: Any) -> str | None:
    """The SecAgg+ stage an instruction names in its ``secaggplus_configs`` record, or None
    for a message that is no SecAgg+ stage."""
    if instruction.has_error():
        return None
    record = instruction.content.config_records.get(tags.SECAGG_CONFIGS)
    stage = None if record is None else record.get(tags.SECAGG_STAGE_ENTRY)
    return stage if stage in tags.SECAGG_STAGES else None


def phase_of(message_type: str) -> str:
    """The fedsec phase of a message: its Flower message type, as a name.

    >>> phase_of("train"), phase_of("train.my step")
    ('train', 'train.my_step')
    """
    return ".".join(tags.safe_name(part) for part in message_type.split("."))


def arrays_of(content: Any) -> Iterator[tuple[str, int, str, np.ndarray]]:
    """Every array of a RecordDict: (record key, index, array name, numpy array), in order."""
    for key, record in content.array_records.items():
        for index, (name, array) in enumerate(record.items()):
            yield str(key), index, str(name), np.asarray(array.numpy())


def message_rows(message: Any, direction: str, node_id: int,
                 extra: Mapping[str, Any] | None = None) -> list[Row]:
    """The rows of ``message`` (its head, then its arrays) sent ``direction``.

    ``node_id`` is the client end of the link; ``extra`` adds metadata to the head row.
    """
    metadata = message.metadata
    message_type = str(metadata.message_type)
    head: dict[str, Any] = {
        tags.NODE_ID: str(node_id), tags.MESSAGE_ID: str(metadata.message_id),
        tags.GROUP_ID: str(metadata.group_id), tags.MESSAGE_TYPE: message_type,
    }
    if direction == tags.REPLY:
        head[tags.REPLY_TO] = str(metadata.reply_to_message_id)
    head.update(extra or {})
    arrays: list[tuple[str, int, str, np.ndarray]] = []
    if message.has_error():
        error = message.error
        head[tags.ERROR] = {"code": int(error.code), "reason": str(error.reason)}
    else:
        content = message.content
        arrays = list(arrays_of(content))
        head[tags.CONFIGS] = _entries(content.config_records)
        head[tags.METRICS] = _entries(content.metric_records)
        layout: dict[str, list[list[Any]]] = {}
        for key, _, name, value in arrays:
            layout.setdefault(key, []).append([name, value.dtype.str, list(value.shape)])
        head[tags.ARRAY_RECORDS] = layout
    head[tags.N_ARRAYS] = len(arrays)
    records_bytes = len(canonical_json([head.get(tags.CONFIGS), head.get(tags.METRICS)]))
    rows = [Row(tags.message_tag(message_type, direction), b"", head, records_bytes)]
    for key, index, name, value in arrays:
        rows.append(Row(tags.array_tag(message_type, direction, key), value,
                        {tags.MESSAGE_ID: head[tags.MESSAGE_ID], tags.RECORD: key,
                         tags.ARRAY: name, tags.INDEX: index}, int(value.nbytes)))
    return rows


def digest_parts(message: Any) -> list[bytes]:
    """What :func:`content_digest` hashes, part by part."""
    metadata = message.metadata
    parts = [f"{metadata.message_type}\x1f{metadata.group_id}".encode()]
    if message.has_error():
        parts.append(f"error\x1f{message.error.code}\x1f{message.error.reason}".encode())
        return parts
    content = message.content
    for key, index, name, value in arrays_of(content):
        value = np.ascontiguousarray(value)
        parts.append(f"{key}\x1f{index}\x1f{name}\x1f{value.dtype.str}\x1f{value.shape}".encode())
        parts.append(value.tobytes())
    for kind, records in (("config", content.config_records),
                          ("metric", content.metric_records)):
        parts.append(f"{kind}\x1f{canonical_json(_entries(records))}".encode())
    return parts


def content_digest(message: Any) -> str:
    """A BLAKE3 fingerprint of what ``message`` carries: its type, group, error or every
    array's record, name, dtype, shape and bytes, and every config and metric entry.

    The ServerApp's recorder and the ClientApp's wrapper compute it independently; equal
    digests mean both ends saw the same content.
    """
    h = blake3()
    for part in digest_parts(message):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()
