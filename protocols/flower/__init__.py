"""Flower: record a real Flower app's messages as a fedsec transcript.

The recorder sits in Flower's own extension points: a Grid that records what the ServerApp
pushes and pulls (:mod:`.recorder`), a wrapper around the ClientApp and a mod that records a
client's plaintext update before protection (:mod:`.client`). :mod:`.simulation` runs an app
in Flower's simulation engine and checks the clients' logs against the transcript;
:class:`.protocol.FlowerProtocol` makes an app a fedsec protocol, and ``flower-fedavg``
(:mod:`.fedavg`, the app in :mod:`.app`) is the shipped one; with ``secagg=true`` it runs
the same app under Flower's SecAgg+ (:mod:`.secagg_app`), a mod recording each client's own
SecAgg+ secrets (:mod:`.secagg`). The transcript contract is
:mod:`.tags`. Flower (the ``flower`` extra) is imported only when an app runs; transcripts
are read, viewed and attacked without it.
"""

from fedsec.protocols.flower import client, fedavg, records, secagg, tags

__all__ = ["client", "fedavg", "records", "secagg", "tags"]
