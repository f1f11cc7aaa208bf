"""FedGraph under masking backends: every message read by its receiver alone, the same run as
under ``plain``; an eavesdropper reads nothing, the server and a client still recover as much."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from fedsec.attacks.fedgraph.disaggregation import ClusterDisaggregation
from fedsec.plan import RunConfig
from fedsec.protocols.fedgraph import tags
from fedsec.runner import run
from fedsec.scoring.reconstruction import ReconstructionError
from fedsec.views import build_view

pytest.importorskip("torch")

TINY = {"hidden": 32, "layers": 1, "epochs": 3, "gcn_epochs": 1, "compare": False, "depth": 1,
        "redraws": 12}
FAMILY = tuple(v for k, v in vars(tags).items() if k.isupper() and isinstance(v, str)
               and v.startswith("fedgraph."))


@functools.cache
def fedgraph(backend: str, clustering: str = "crc"):
    return run(RunConfig(protocol="fedgraph", partition="random:parties=3,features=0.1",
                         backend=backend, params={**TINY, "clustering": clustering},
                         test_size=0.5, secret_seed=0))


def disaggregated(result) -> float:
    view = build_view(result.transcript, "server,party2", result.private)
    return ReconstructionError().score(ClusterDisaggregation().run(view),
                                       result.private)["relative_error"]


def test_plain_messages_travel_as_they_are() -> None:
    result = fedgraph("plain")
    sent = [m for m in result.transcript.messages if m.tag in FAMILY]
    assert all(m.protection == "plain" and tags.SHAPE not in m.meta for m in sent)
    view = build_view(result.transcript, "eavesdropper:*", result.private)
    assert all(view.can_open(m) for m in sent)


@pytest.mark.parametrize(("backend", "clustering"),
                         [("noise", "crc"), ("ckks", "crc"), ("noise", "none")])
def test_each_backend_runs_as_plain_and_shuts_the_eavesdropper_out(backend: str,
                                                                   clustering: str) -> None:
    plain, result = fedgraph("plain", clustering), fedgraph(backend, clustering)
    assert result.outcome.metrics["accuracy"] == plain.outcome.metrics["accuracy"]
    np.testing.assert_allclose(result.outcome.values["test_scores"],
                               plain.outcome.values["test_scores"], rtol=1e-4, atol=1e-5)
    sent = [m for m in result.transcript.messages if m.tag in FAMILY]
    assert len(sent) == sum(m.tag in FAMILY for m in plain.transcript.messages)
    assert all(m.protection == backend for m in sent)
    eavesdropper = build_view(result.transcript, "eavesdropper:*", result.private)
    assert not any(eavesdropper.can_open(m) for m in sent)
    server = build_view(result.transcript, "server", result.private)
    assert all(server.can_open(m) for m in sent if m.receiver == "server")


def test_the_server_with_a_client_still_disaggregates_the_means() -> None:
    # the backend protects the links, not against the server that must read the means
    assert disaggregated(fedgraph("plain")) < 1e-6
    assert disaggregated(fedgraph("noise")) < 1e-6
