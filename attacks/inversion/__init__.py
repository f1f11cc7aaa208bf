"""Gradient inversion: the maths of reconstructing a client's data from what FedAvg sends.

Pure functions, torch-based (imported lazily), numpy in and out, for attack classes of the
protocols that send gradients or locally trained weights:

* :func:`~fedsec.attacks.inversion.maths.idlg_label`: the label of one sample (iDLG);
* :func:`~fedsec.attacks.inversion.maths.invert_gradient`: DLG and Inverting Gradients;
* :func:`~fedsec.attacks.inversion.fedavg.invert_fedavg`: inverting a multi-step local update
  (Dimitrov et al. 2022), with :class:`~fedsec.attacks.inversion.fedavg.LocalTraining` and
  its epoch-order-invariant prior (:mod:`~fedsec.attacks.inversion.epoch_prior`);
* :func:`~fedsec.attacks.inversion.labels.label_counts_from_bias_update` and
  :func:`~fedsec.attacks.inversion.labels.mean_prediction`: a batch's label counts (Geng et
  al. 2021).

Every optimisation returns its convergence record (:mod:`fedsec.convergence`) on the
:class:`~fedsec.attacks.inversion.dummy.Inversion`, the best of several starts kept.

Examples
--------
>>> import numpy as np
>>> idlg_label(np.outer([0.3, -0.9, 0.6], [1.0, -2.0]))
1
"""

from fedsec.attacks.inversion.dummy import Inversion
from fedsec.attacks.inversion.fedavg import LocalTraining, invert_fedavg, local_training, simulate
from fedsec.attacks.inversion.labels import label_counts_from_bias_update, mean_prediction
from fedsec.attacks.inversion.maths import (
    batch_gradient,
    idlg_label,
    invert_gradient,
    total_variation,
)

__all__ = ["Inversion", "LocalTraining", "batch_gradient", "idlg_label", "invert_fedavg",
           "invert_gradient", "label_counts_from_bias_update", "local_training",
           "mean_prediction", "simulate", "total_variation"]
