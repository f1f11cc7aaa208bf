"""Attacks on Flower traffic recorded by :mod:`fedsec.protocols.flower`: the server reads each
client's update from what it was sent (:mod:`.update_readout`); under SecAgg+, the server
with colluding clients unmasks one (:mod:`.secagg_coalition`, its arithmetic in
:mod:`.secagg_maths`)."""

from fedsec.attacks.flower import secagg_coalition, secagg_maths, update_readout

__all__ = ["secagg_coalition", "secagg_maths", "update_readout"]
