"""The ClientApp: a few gradient steps of least squares on this node's synthetic rows.

The two fedsec lines: ``record_plaintext`` in the mods, ``expose_data`` in ``train``.
"""

import numpy as np
from flwr.app import Array, ArrayRecord, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp

from fedsec.protocols.flower.client import expose_data, record_plaintext

app = ClientApp(mods=[record_plaintext])


def _data(partition: int, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1000 + partition)
    X = rng.normal(size=(20 + 5 * partition, n_features))
    return X, X @ np.arange(1.0, n_features + 1) + 0.1 * rng.normal(size=len(X))


@app.train()
def train(message: Message, context) -> Message:
    config = context.run_config
    X, y = _data(int(context.node_config["partition-id"]), int(config["n-features"]))
    expose_data(context, X, y)
    w = message.content["arrays"]["w"].numpy().copy()
    for _ in range(int(config["local-steps"])):
        w -= float(config["lr"]) * X.T @ (X @ w - y) / len(y)
    content = RecordDict({"arrays": ArrayRecord({"w": Array(w)}),
                          "metrics": MetricRecord({"num-examples": len(y),
                                                   "loss": float(np.mean((X @ w - y) ** 2))})})
    return Message(content, reply_to=message)


@app.evaluate()
def evaluate(message: Message, context) -> Message:
    X, y = _data(int(context.node_config["partition-id"]), int(context.run_config["n-features"]))
    w = message.content["arrays"]["w"].numpy()
    content = RecordDict({"metrics": MetricRecord({"num-examples": len(y),
                                                   "mse": float(np.mean((X @ w - y) ** 2))})})
    return Message(content, reply_to=message)
