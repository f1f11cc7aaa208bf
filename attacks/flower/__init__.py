"""Attacks on Flower traffic recorded by :mod:`fedsec.protocols.flower`: the server reads each
client's update from what it was sent (:mod:`.update_readout`)."""

from fedsec.attacks.flower import update_readout

__all__ = ["update_readout"]
