"""The Flower family's transcript contract: message tags, metadata keys, truth keys.

The recorder (:mod:`.recorder`) writes these for every message a Flower run exchanges; the
attacks on Flower traffic (:mod:`fedsec.attacks.flower`) read them. Nothing else types a tag
of this family: import the constant, or build one with :func:`message_tag` and
:func:`array_tag`.

One Flower message becomes one *head* row and one row per array:

- the head row, tagged ``flower.<message type>.<instruction|reply>``, carries the message's
  ConfigRecord and MetricRecord entries, its Flower ids and the layout of its arrays as
  metadata (its payload is empty), so the transcript holds exactly one head row per message
  Flower sent;
- each array of each ArrayRecord is a row of its own, tagged
  ``flower.<message type>.<instruction|reply>.<record key>``, its payload the array itself
  (dtype and shape as Flower sent them).

Flower's ``train`` messages carry FedAvg's global model (instruction) and a client's local
model (reply); ``evaluate`` the global model and the client's metrics.
"""

from __future__ import annotations

import re

FAMILY = "flower"

# -- message directions and types -------------------------------------------------------------
INSTRUCTION = "instruction"
"""A message from the ServerApp to a ClientApp (Flower's "instruction" message)."""
REPLY = "reply"
"""A ClientApp's reply to an instruction."""
TRAIN, EVALUATE, QUERY = "train", "evaluate", "query"
"""Flower's message types (``flwr.app.MessageType``); custom ``train.<action>`` types too."""
ARRAYS_KEY = "arrays"
"""The record key under which Flower's strategies send model arrays (``arrayrecord_key``)."""

# -- tags -------------------------------------------------------------------------------------
TRAIN_INSTRUCTION = "flower.train.instruction"
"""Head row of a train instruction: the strategy's ConfigRecord, e.g. ``server-round``."""
TRAIN_REPLY = "flower.train.reply"
"""Head row of a train reply: the client's MetricRecord, e.g. ``num-examples``."""
TRAIN_INSTRUCTION_ARRAYS = "flower.train.instruction.arrays"
"""One array of the global model sent for training (FedAvg's ``arrays`` record)."""
TRAIN_REPLY_ARRAYS = "flower.train.reply.arrays"
"""One array of a client's locally trained model (FedAvg's ``arrays`` record)."""
EVALUATE_INSTRUCTION = "flower.evaluate.instruction"
"""Head row of an evaluate instruction."""
EVALUATE_REPLY = "flower.evaluate.reply"
"""Head row of an evaluate reply: the client's evaluation metrics."""
EVALUATE_INSTRUCTION_ARRAYS = "flower.evaluate.instruction.arrays"
"""One array of the global model sent for evaluation."""

# -- Flower's legacy records (``flwr.compat``: DefaultWorkflow, SecAggPlusWorkflow) -----------
FIT_INS_KEY, FIT_RES_KEY = "fitins.parameters", "fitres.parameters"
"""The ArrayRecord keys of a legacy train instruction (the global model) and reply."""
EVALUATE_INS_KEY = "evaluateins.parameters"
"""The ArrayRecord key of a legacy evaluate instruction (the global model)."""
LEGACY_INSTRUCTION_RECORD = {FIT_RES_KEY: FIT_INS_KEY}
"""A legacy reply's record key → the instruction's record it answers (an update is the
reply's arrays minus these)."""
TRAIN_INSTRUCTION_FITINS = "flower.train.instruction.fitins_parameters"
"""One array of the global model in a legacy train instruction (SecAgg+'s collect stage)."""
TRAIN_REPLY_FITRES = "flower.train.reply.fitres_parameters"
"""One array of a legacy train reply (none under SecAgg+: its mod empties the record)."""
EVALUATE_INSTRUCTION_EVALUATEINS = "flower.evaluate.instruction.evaluateins_parameters"
"""One array of the global model in a legacy evaluate instruction."""

# -- SecAgg+ (Bonawitz et al. CCS 2017; Bell et al. CCS 2020, as Flower's secaggplus_mod) -----
SECAGG_CONFIGS = "secaggplus_configs"
"""The ConfigRecord every SecAgg+ message carries (``flwr``'s ``RECORD_KEY_CONFIGS``)."""
SECAGG_STAGE_ENTRY = "stage"
"""The entry of an instruction's ``secaggplus_configs`` that names its stage."""
SECAGG_STAGE = "secagg_stage"
"""Head-row metadata: the SecAgg+ stage of the message (an instruction names it in its
ConfigRecord; a reply is of its instruction's stage)."""
SETUP, SHARE_KEYS = "setup", "share_keys"
COLLECT_MASKED_VECTORS, UNMASK = "collect_masked_vectors", "unmask"
SECAGG_STAGES = (SETUP, SHARE_KEYS, COLLECT_MASKED_VECTORS, UNMASK)
"""The stages of a SecAgg+ round, in order (Flower's ``Stage``)."""

# -- metadata keys (head rows) ----------------------------------------------------------------
NODE_ID = "node_id"
"""The Flower node id of the client end of the link (a decimal string: ids are 64-bit)."""
PARTITION_ID = "partition_id"
"""The client's ``partition-id`` (its node config), when the run knows it."""
MESSAGE_ID = "message_id"
"""Flower's id of the message (a reply's is its own; ``reply_to`` names the instruction)."""
REPLY_TO = "reply_to"
"""A reply's instruction id."""
GROUP_ID = "group_id"
"""Flower's ``group_id`` (the server round for Flower's strategies)."""
MESSAGE_TYPE = "message_type"
"""Flower's message type as sent (``train``, ``evaluate``, ``query``, ``train.<action>``)."""
CONFIGS = "configs"
"""Every ConfigRecord: ``{record key: {entry: value}}`` (bytes as ``{"hex": ...}``)."""
METRICS = "metrics"
"""Every MetricRecord: ``{record key: {entry: value}}``."""
ARRAY_RECORDS = "array_records"
"""Every ArrayRecord's layout: ``{record key: [[array name, dtype, shape], ...]}`` in order."""
N_ARRAYS = "n_arrays"
"""How many array rows follow the head row."""
ERROR = "error"
"""A reply that carries Flower's error instead of content: ``{"code": ..., "reason": ...}``."""

# -- metadata keys (array rows) ---------------------------------------------------------------
RECORD = "record"
"""The array's ArrayRecord key as Flower wrote it (the tag holds a name-safe form)."""
ARRAY = "array"
"""The array's name inside its ArrayRecord (a torch ``state_dict`` key, or ``"0"``...)."""
INDEX = "index"
"""The array's position inside its ArrayRecord."""

# -- header keys ------------------------------------------------------------------------------
NODES = "flower_nodes"
"""Result/outcome key: party name → Flower node id and partition id."""

# -- run metrics: the differential privacy a run used (``result.json``) -------------------------
DP_PLACEMENT = "dp"
"""Where Flower's fixed-clipping DP ran: ``none``, ``client`` (``fixedclipping_mod`` clips each
update before it is sent) or ``server`` (the server clips what it received)."""
DP_CLIPPING_NORM = "dp_clipping_norm"
"""The L2 norm every client's update was clipped to (over all its arrays)."""
DP_NOISE_MULTIPLIER = "dp_noise_multiplier"
"""Flower's noise multiplier z: the aggregate gets Gaussian noise of standard deviation
``z x clipping norm / sampled clients`` per weight."""
DP_NOISE_STDDEV = "dp_noise_stddev"
"""That standard deviation, as Flower computed it."""
DP_ROUNDS = "dp_rounds"
"""Noised aggregates released (one per round that aggregated): the accountant's compositions."""
DP_SAMPLED_CLIENTS = "dp_sampled_clients"
"""Clients sampled each round (every client: the sampling rate is 1)."""
DP_POPULATION = "dp_population"
"""Clients in the federation."""
DP_METRICS = (DP_CLIPPING_NORM, DP_NOISE_MULTIPLIER, DP_NOISE_STDDEV, DP_ROUNDS,
              DP_SAMPLED_CLIENTS, DP_POPULATION)
"""The numeric DP metrics a run with DP records beside :data:`DP_PLACEMENT`."""
CLIPPING_NORM_ENTRY = "clipping_norm"
"""The ConfigRecord entry in which Flower's client-side DP wrapper sends the clipping norm
(``flwr``'s ``KEY_CLIPPING_NORM``)."""

# -- private holdings (ground truth, ``party/NAME/value/...``) --------------------------------
UPDATE = "update"
"""``update/round<r>``: a client's plaintext update of round ``r`` as the truth mod saw it
before any protection: its reply's arrays minus the instruction's, flattened to float64 in
the reply's ArrayRecord order."""
MODEL = "model"
"""``model/round<r>``: the client's reply arrays themselves (its local model), flattened."""
TRAINING_ROWS = "training/X"
"""The rows a client trained on, where the app exposes them."""
TRAINING_LABELS = "training/y"
"""Their labels."""

SECAGG = "secagg"
"""``secagg/round<r>/<name>``: a client's own SecAgg+ secrets of round ``r`` as its mod held
them (uint8 arrays): ``sk1`` (the DH key of its pairwise masks), ``sk2`` (the DH key that
encrypts its shares), ``rd_seed`` (the seed of its self mask), and ``pk1``, ``pk2``."""
SECAGG_SECRETS = ("sk1", "sk2", "rd_seed", "pk1", "pk2")

RENAMED: dict[str, str] = {}
"""Tag in a transcript of fedsec 0.1.0 → tag today (none: the family is newer)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_\-]")


def safe_name(text: str) -> str:
    """``text`` with every character a tag cannot hold replaced by ``_`` (never empty).

    >>> safe_name("fedprox step")
    'fedprox_step'
    """
    return _UNSAFE.sub("_", text) or "_"


def message_tag(message_type: str, direction: str) -> str:
    """The head row's tag of a message of ``message_type`` going ``direction``.

    >>> message_tag("train", REPLY) == TRAIN_REPLY
    True
    >>> message_tag("train.fedprox step", INSTRUCTION)
    'flower.train.fedprox_step.instruction'
    """
    parts = [safe_name(p) for p in message_type.split(".")]
    return ".".join((FAMILY, *parts, direction))


def array_tag(message_type: str, direction: str, record_key: str) -> str:
    """The tag of an array row: the head's tag and the ArrayRecord's key.

    >>> array_tag("train", REPLY, ARRAYS_KEY) == TRAIN_REPLY_ARRAYS
    True
    """
    return f"{message_tag(message_type, direction)}.{safe_name(record_key)}"


def update_key(server_round: int) -> str:
    """The private-value key of a client's plaintext update of ``server_round``.

    >>> update_key(2)
    'update/round2'
    """
    return f"{UPDATE}/round{int(server_round)}"


def secagg_key(server_round: int, name: str) -> str:
    """The private-value key of a client's SecAgg+ secret ``name`` of ``server_round``.

    >>> secagg_key(1, "sk1")
    'secagg/round1/sk1'
    """
    return f"{SECAGG}/round{int(server_round)}/{name}"


def model_key(server_round: int) -> str:
    """The private-value key of a client's local model (its reply) of ``server_round``."""
    return f"{MODEL}/round{int(server_round)}"
