"""A tiny numpy-only Flower app: FedAvg of a least-squares model on synthetic data."""
