"""The ServerApp: Flower's FedAvg over every node, counting its own messages.

It keeps in ``context.state`` what it wants reported: the final model, the last round's
aggregate and the count of messages its strategy sent and received.
"""

import numpy as np
from flwr.app import Array, ArrayRecord, MetricRecord
from flwr.serverapp import ServerApp
from flwr.serverapp.strategy import FedAvg

app = ServerApp()


class CountingFedAvg(FedAvg):
    """FedAvg counting every instruction it configures and every reply it aggregates."""

    messages = 0

    def configure_train(self, server_round, arrays, config, grid):
        out = list(super().configure_train(server_round, arrays, config, grid))
        self.messages += len(out)
        return out

    def configure_evaluate(self, server_round, arrays, config, grid):
        out = list(super().configure_evaluate(server_round, arrays, config, grid))
        self.messages += len(out)
        return out

    def aggregate_train(self, server_round, replies):
        replies = list(replies)
        self.messages += len(replies)
        arrays, metrics = super().aggregate_train(server_round, replies)
        self.aggregate = arrays
        return arrays, metrics

    def aggregate_evaluate(self, server_round, replies):
        replies = list(replies)
        self.messages += len(replies)
        return super().aggregate_evaluate(server_round, replies)


@app.main()
def main(grid, context) -> None:
    config = context.run_config
    n_nodes = int(config["min-nodes"])
    strategy = CountingFedAvg(fraction_train=1.0, fraction_evaluate=1.0,
                              min_train_nodes=n_nodes, min_evaluate_nodes=n_nodes,
                              min_available_nodes=n_nodes)
    initial = ArrayRecord({"w": Array(np.zeros(int(config["n-features"])))})
    result = strategy.start(grid=grid, initial_arrays=initial,
                            num_rounds=int(config["num-server-rounds"]), timeout=120.0)
    context.state["final"] = result.arrays
    context.state["aggregate"] = strategy.aggregate
    context.state["counts"] = MetricRecord({"messages": strategy.messages})
