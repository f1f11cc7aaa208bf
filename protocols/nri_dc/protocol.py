"""NRI-DC: non-readily identifiable data collaboration, with five collaboration functions.

Nosaka and Yoshise, "Data Collaboration Analysis Over Matrix Manifolds"
(arXiv:2403.02780), Algorithm 1 (the NRI-DC framework of Imakura et al.,
Information Fusion 98, 2023) with the collaboration functions of section 3.
One round, no iteration between parties:

1. the first worker draws the anchor ``X_anc`` and sends it to the other
   workers (never to the master);
2. each worker fits its secret map ``F_i`` (PCA of ``X_i + sigma E_i``), draws
   a row permutation ``P_i`` and sends the master ``P_i X_i F_i``,
   ``X_anc F_i`` and ``P_i y_i``; ``F_i`` is erased (it never leaves
   :func:`protocols.nri_dc_maths.share`); the permutation is the worker's
   secret, kept (as ``shared_rows``) so the auditor can score;
3. the master builds ``G_i`` (LS, GEP, OPP, GOPP or RDP), trains ``h`` on
   ``[P_i X_i F_i G_i]`` and returns ``h(X_anc F_i G_i)`` to each worker;
4. each worker trains its own model on ``(X_anc, predictions)``.

Metrics are the mean over workers of their own model's test ROC-AUC and
accuracy, next to ``local_*`` (each worker on its data alone); the
centralized reference is the same model on the pooled training set. NRI-DC
approximates the central model by design, so the run is compared with the
reference on ROC-AUC within a relative 0.1, not bit for bit.

Every message goes from one party to one other that must read it (the
master needs the representations to align and model them), so a masking
backend protects them on the link only: under the ``plain`` backend (the
paper's setting, its privacy resting on the erased maps) they travel as
they are, and the paper warns that an eavesdropper without transport
encryption (TLS) then holds what a colluding worker and master hold; under
any other backend each is the backend's direct send to its receiver
(:func:`fedsec.backends.primitives.direct_send`: encrypted to the
receiver's key under ``paillier`` and ``ckks``, masked with a key only the
two ends share under ``noise``), which the receiver opens and no one else.
Defaults follow section 4; where our copy of the paper lost the
value (anchor size, sigma, the reduced-dimension formula) the choice is
documented on :class:`NRIDCParams`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np

from fedsec.backends.primitives import direct_send
from fedsec.declare import Bool, Choice, Declared, Float, Int, owner_of
from fedsec.errors import ValidationError
from fedsec.interfaces import Defense, MaskingBackend, Protocol, apply_transforms
from fedsec.outcomes import Outcome
from fedsec.protocols.nri_dc import collaboration as collab
from fedsec.protocols.nri_dc import maths, models, tags
from fedsec.registry import register
from fedsec.scoring.rows import SOURCE_ROWS
from fedsec.seeding import generator

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data import Dataset
    from fedsec.federation import Federation, Party

PAPER = ("Nosaka and Yoshise, Data Collaboration Analysis Over Matrix Manifolds, "
         "arXiv:2403.02780 (NRI-DC: Imakura et al., Information Fusion 98, 2023)")
MASTER = "master"


@dataclass(frozen=True, kw_only=True)
class NRIDCParams(Declared):
    """Parameters of NRI-DC.

    ``collab``: the collaboration function (ls, gep, opp, gopp, rdp).
    ``model``: h and the workers' models (logistic, mlp, random-forest).
    ``n_components``: ``m_tilde``; 0 means ``floor(3 m / 4)`` (6 for Pima, as
    in the paper). ``sigma`` and ``noise``: the perturbation ``sigma E_i``
    (standard normal ``E_i`` in the paper's experiments; its value of sigma
    is lost from our copy, 0.1 is ours). ``n_anchor``: anchor rows (lost too;
    2000, the usual choice of the DC papers). ``anchor``: normal, uniform or
    public (rows of ``anchor_dataset``). ``rdp_weight``, ``rdp_init``: RDP's
    penalty weight and starting point; ``rdp_optimizer``: Riemannian BFGS (the
    paper's) or L-BFGS-B. ``max_iterations``, ``tol``: GOPP and
    RDP stopping rules. ``rescale``: multiply every ``G_i`` by one common
    factor so the collaborative representation has the data's size (a no-op
    for square orthogonal ``G_i``; it removes the LS/GEP scale artefact, see
    :func:`protocols.collaboration_functions.common_scale`). ``dr_epsilon``:
    each worker's epsilon-DR check; ``dr_downsample``: drop the samples that
    violate it before sharing (set by the ``epsilon-dr-downsampling`` defence).
    """

    collab: Annotated[str, Choice(*collab.METHODS)] = "opp"
    """The master's collaboration function: ls, gep, opp (the paper's proposal), gopp or rdp."""
    model: Annotated[str, Choice(*models.MODELS)] = "logistic"
    """The master's model h and the workers' own models: logistic, mlp or random-forest
    (scikit-learn)."""
    n_components: Annotated[int, Int(min=0)] = 0
    """m_tilde, the columns of each worker's secret map F_i (at most the number of features); 0:
    floor(3 m / 4) of m features."""
    sigma: Annotated[float, Float(min=0.0)] = 0.1
    """Scale of the perturbation sigma E_i added before each worker's PCA (0.1 is ours: the paper's
    value is lost)."""
    noise: Annotated[str, Choice(*maths.NOISE_KINDS)] = "normal"
    """Distribution of the perturbation E_i's entries: normal (standard normal, the paper's) or
    uniform (U[0, 1))."""
    n_anchor: Annotated[int, Int(min=1)] = 2000
    """Rows of the shared anchor X_anc (2000, the DC papers' usual choice: the paper's value is
    lost)."""
    anchor: Annotated[str, Choice(*maths.ANCHOR_KINDS)] = "normal"
    """How the anchor is drawn: normal (standard normal entries, the paper's), uniform (U[0, 1)
    entries) or public (rows of anchor_dataset)."""
    anchor_dataset: str = ""
    """The named public dataset the anchor's rows come from; given with anchor=public and only
    then."""
    rdp_weight: Annotated[float, Float(min=0.0, min_inclusive=False)] = 1.0
    """Weight of RDP's rank-deficiency penalty."""
    rdp_init: Annotated[str, Choice("ls", "opp")] = "opp"
    """RDP's starting point: the ls or opp solution."""
    rdp_optimizer: Annotated[str, Choice(*collab.OPTIMIZERS)] = "rbfgs"
    """RDP's optimiser: rbfgs (the paper's Riemannian BFGS over full-rank matrices, as Manopt's
    rlbfgs) or lbfgs (SciPy's L-BFGS-B on the entries, for comparison)."""
    max_iterations: Annotated[int, Int(min=1)] = 500
    """Iterations at most of GOPP and of RDP's optimiser."""
    tol: Annotated[float, Float(min=0.0)] = 1e-8
    """Stopping tolerance of GOPP (relative change of the target Z) and of RDP's optimiser
    (relative change of the objective)."""
    rescale: Annotated[bool, Bool()] = True
    """Multiply every G_i by one common factor so the collaborative representation has the data's
    size (a no-op for square orthogonal G_i)."""
    dr_epsilon: Annotated[float, Float(min=0.0)] = 0.0
    """Each worker checks epsilon-DR at this epsilon (every sample's reconstruction error ||x - x F
    F^+|| at least epsilon, feature units); 0: no check."""
    dr_downsample: Annotated[bool, Bool()] = False
    """Drop the samples that violate epsilon-DR before sharing (needs dr_epsilon > 0; the
    epsilon-dr-downsampling defence sets it)."""

    def __post_init__(self) -> None:
        owner = owner_of(self)
        if (self.anchor == "public") != bool(self.anchor_dataset):
            raise ValidationError(
                f"The 'anchor_dataset' parameter of {owner} names the public table of "
                "anchor='public' and only then. Got anchor="
                f"{self.anchor!r} with anchor_dataset={self.anchor_dataset!r} instead."
            )
        if self.dr_downsample and self.dr_epsilon <= 0:
            raise ValidationError(
                f"The 'dr_epsilon' parameter of {owner} must be > 0 when dr_downsample is on. "
                f"Got {self.dr_epsilon!r} instead."
            )


@register("protocol", "nri-dc")
class NRIDC(Protocol):
    """Non-readily identifiable data collaboration: secret PCA maps, a shared anchor, collaboration
    functions (LS, GEP, OPP, GOPP, RDP), one round.

    Workers share secretly reduced, permuted data once; the master aligns and models it.
    """

    paper = PAPER
    partition_kinds = ("horizontal",)
    default_partition = "horizontal:parties=13,size=50"
    default_dataset = "pima"
    default_test_size = 100  # the paper's 100 shared test samples
    coordinators = ((MASTER, "master"),)
    requires = frozenset()
    renamed_tags = tags.RENAMED
    exposes = frozenset({tags.ANCHOR, tags.INTERMEDIATE, tags.ANCHOR_REPRESENTATION, tags.LABELS,
                         tags.ANCHOR_PREDICTIONS})
    Params = NRIDCParams

    def run(self, federation: Federation, backend: MaskingBackend,
            defenses: Sequence[Defense] = ()) -> Outcome:
        with collab.single_blas_thread():  # small matrices: BLAS threads only contend
            return self._run(federation, backend, defenses)

    def _run(self, federation: Federation, backend: MaskingBackend,
             defenses: Sequence[Defense]) -> Outcome:
        params: NRIDCParams = self.params
        workers = _workers(federation)
        net = federation.network
        test = federation.test_set()
        n_classes = test.n_classes
        n_features = workers[0].held_shard().X.shape[1]
        n_components = maths.reduced_dimension(n_features, params.n_components)
        anchors = self._share_anchor(federation, backend, workers, n_features)
        received: dict[str, dict[str, np.ndarray]] = {}
        certificates: dict[str, dict[str, Any]] = {}
        with net.stage("share", round=0):
            for worker in workers:
                with net.compute(worker.name):
                    X, y = _labelled(worker)
                    out = maths.share(X, y, anchors[worker.name],
                                      n_components, sigma=params.sigma, rng=worker.rng,
                                      noise=params.noise, dr_epsilon=params.dr_epsilon,
                                      downsample=params.dr_downsample)
                    worker.private[SOURCE_ROWS] = out.rows
                    certificates[worker.name] = out.certificate
                    intermediate = apply_transforms(defenses, worker, tags.INTERMEDIATE,
                                                    out.intermediate)
                meta = {tags.N_FEATURES: n_features, tags.N_COMPONENTS: n_components,
                        tags.N_ROWS: int(out.rows.size)}
                received[worker.name] = {
                    "intermediate": _send(federation, backend, worker.name, MASTER, intermediate,
                                          tag=tags.INTERMEDIATE, meta=meta),
                    "anchor": _send(federation, backend, worker.name, MASTER, out.anchor,
                                    tag=tags.ANCHOR_REPRESENTATION,
                                    meta={tags.N_FEATURES: n_features,
                                          tags.N_COMPONENTS: n_components}),
                    "labels": _send(federation, backend, worker.name, MASTER, out.labels,
                                    tag=tags.LABELS, meta={tags.N_CLASSES: n_classes}),
                }
        predictions, collab_info = self._master(federation, backend, workers, received,
                                                n_classes)
        per_worker, local, owns = [], [], []
        with net.stage("local_model", round=0):
            for worker in workers:
                with net.compute(worker.name):
                    own = models.fit(params.model, anchors[worker.name], predictions[worker.name],
                                     worker.rng)
                owns.append(own)
                per_worker.append(models.evaluate(own, test.X, test.y, n_classes))
                alone = models.fit(params.model, *_labelled(worker), worker.rng)
                local.append(models.evaluate(alone, test.X, test.y, n_classes))
        metrics: dict[str, Any] = {
            "roc_auc": float(np.mean([m["roc_auc"] for m in per_worker])),
            "accuracy": float(np.mean([m["accuracy"] for m in per_worker])),
            "roc_auc_min": float(np.min([m["roc_auc"] for m in per_worker])),
            "local_roc_auc": float(np.mean([m["roc_auc"] for m in local])),
            "local_accuracy": float(np.mean([m["accuracy"] for m in local])),
            "n_workers": len(workers), "n_components": n_components,
            **collab_info, **_dr_metrics(params, certificates),
        }
        model = models.WorkerModels(names=tuple(w.name for w in workers), estimators=tuple(owns),
                                    n_classes=n_classes)
        return Outcome(metrics=metrics, values={"roc_auc": np.asarray(metrics["roc_auc"])},
                       model=model)

    def _share_anchor(self, federation: Federation, backend: MaskingBackend,
                      workers: list[Party], n_features: int) -> dict[str, np.ndarray]:
        """The first worker draws the anchor and sends it to every other worker."""
        params: NRIDCParams = self.params
        net = federation.network
        owner = workers[0]
        public = None
        if params.anchor == "public":
            from fedsec.data import load

            public = load(params.anchor_dataset).X
        with net.stage("anchor", round=0):
            with net.compute(owner.name):
                X_anc = maths.make_anchor(params.anchor, params.n_anchor, n_features, owner.rng,
                                          public=public)
            meta = {tags.KIND: params.anchor, tags.N_ANCHOR: params.n_anchor}
            anchors = {owner.name: X_anc}
            owner.private[tags.PRIVATE_ANCHOR] = X_anc
            for worker in workers[1:]:
                anchors[worker.name] = _send(federation, backend, owner.name, worker.name, X_anc,
                                             tag=tags.ANCHOR, meta=meta)
        return anchors

    def _master(self, federation: Federation, backend: MaskingBackend, workers: list[Party],
                received: dict[str, dict[str, np.ndarray]], n_classes: int,
                ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Collaboration functions, model h, predictions on each worker's anchor image."""
        params: NRIDCParams = self.params
        net = federation.network
        master = federation.party(MASTER)
        names = [w.name for w in workers]
        with net.stage("collaborate", round=0):
            with net.compute(MASTER):
                anchors = [np.asarray(received[n]["anchor"]) for n in names]
                n_dims = min(A.shape[1] for A in anchors)
                start = time.perf_counter()
                found = collab.collaboration_functions(
                    params.collab, anchors, n_dims, rdp_weight=params.rdp_weight,
                    rdp_init=params.rdp_init, rdp_optimizer=params.rdp_optimizer,
                    max_iterations=params.max_iterations, tol=params.tol)
                seconds = time.perf_counter() - start
                scale = collab.common_scale(anchors, found.functions) if params.rescale else 1.0
                functions = [scale * G for G in found.functions]
                X_hat = np.vstack([np.asarray(received[n]["intermediate"]) @ G
                                   for n, G in zip(names, functions, strict=True)])
                y_hat = np.concatenate([np.asarray(received[n]["labels"]) for n in names])
                if y_hat.size == 0:
                    raise ValidationError("No worker shared any sample; nothing to learn from.")
                h = models.fit(params.model, X_hat, y_hat, master.rng)
                outgoing = {n: np.asarray(h.predict(A @ G), dtype=np.int64)
                            for n, A, G in zip(names, anchors, functions, strict=True)}
            predictions = {n: _send(federation, backend, MASTER, n, outgoing[n],
                                    tag=tags.ANCHOR_PREDICTIONS,
                                    meta={tags.MODEL: params.model, tags.N_CLASSES: n_classes})
                           for n in names}
        info = {"collab_seconds": seconds, "collab_iterations": found.iterations,
                "collab_converged": found.converged,
                "alignment_error": collab.alignment_error(anchors, functions),
                "collab_scale": scale, "n_dims": n_dims,
                "collab_condition": float(max(np.linalg.cond(G) for G in functions))}
        return predictions, info

    def agreement_rtol(self, backend: MaskingBackend) -> float:
        """NRI-DC approximates the central model: ROC-AUC within a relative 0.1."""
        return 0.1

    def reference(self, train: Dataset, test: Dataset, *, seed: int) -> Outcome:
        """The central model: the same model kind on the pooled training set."""
        with collab.single_blas_thread():
            model = models.fit(self.params.model, train.X, train.y,
                               generator(seed, "nri-dc/central"))
        metrics = models.evaluate(model, test.X, test.y, test.n_classes)
        return Outcome(metrics=metrics, values={"roc_auc": np.asarray(metrics["roc_auc"])},
                       model=model)


def _workers(federation: Federation) -> list[Party]:
    """The data parties, each with one cell of labelled rows of a classification task."""
    if federation.test is None or federation.test.task == "regression":
        raise ValidationError("NRI-DC trains classifiers: it needs a classification dataset.")
    workers = federation.data_parties()
    if not workers:
        raise ValidationError("NRI-DC needs at least one worker holding data.")
    for worker in workers:
        if len(worker.held_shard().cells) != 1 or worker.held_shard().cells[0].y is None:
            raise ValidationError(
                "NRI-DC workers each hold one labelled horizontal shard (every feature and the "
                f"labels of their rows); {worker.name!r} does not."
            )
    return workers


def _labelled(worker: Party) -> tuple[np.ndarray, np.ndarray]:
    """A worker's features and labels (:func:`_workers` checked that it holds both)."""
    shard = worker.held_shard()
    if shard.y is None:
        raise ValidationError(f"NRI-DC worker {worker.name!r} holds no labels.")
    return shard.X, shard.y


def _dr_metrics(params: NRIDCParams, certificates: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The workers' epsilon-DR certificate, summarised (only when ``dr_epsilon`` > 0)."""
    if params.dr_epsilon <= 0:
        return {}
    values = list(certificates.values())
    n_samples = sum(c["n_samples"] for c in values)
    return {
        "dr_epsilon": params.dr_epsilon,
        "dr_passed": all(c["passed"] for c in values),
        "dr_margin": float(min(c["margin"] for c in values)),
        "dr_fraction_violating": sum(c["n_violating"] for c in values) / max(n_samples, 1),
        "dr_min_error": float(min(c["min_error"] for c in values)),
        "dr_fraction_dropped": sum(c["n_dropped"] for c in values) / max(n_samples, 1),
        "dr_passed_after": all(c["passed_after"] for c in values),
        "dr_margin_after": float(min(c["margin_after"] for c in values)),
    }


def _send(federation: Federation, backend: MaskingBackend, sender: str, receiver: str,
          values: np.ndarray, *, tag: str, meta: dict[str, Any]) -> np.ndarray:
    """One of NRI-DC's messages, read by its receiver alone under a masking backend
    (:func:`fedsec.backends.primitives.direct_send`), its shape then in the metadata."""
    if backend.name != "plain":
        meta = {**meta, tags.SHAPE: list(np.shape(values))}
    return direct_send(federation, backend, sender, receiver, values, tag=tag, meta=meta)
