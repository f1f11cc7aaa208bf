"""Attacks on Flower traffic recorded by :mod:`fedsec.protocols.flower`: the server reads each
client's update from what it was sent (:mod:`.update_readout`) and, when that update is one
full-batch gradient (FedSGD), the rows behind it (:mod:`.gradient_inversion`: DLG, iDLG,
Inverting Gradients); under SecAgg+, the server with colluding clients unmasks one
(:mod:`.secagg_coalition`, its arithmetic in :mod:`.secagg_maths`)."""

from fedsec.attacks.flower import (
    gradient_inversion,
    secagg_coalition,
    secagg_maths,
    update_readout,
)

__all__ = ["gradient_inversion", "secagg_coalition", "secagg_maths", "update_readout"]
