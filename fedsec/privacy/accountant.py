"""Epsilon at a stated delta for the noise a run's defences declare.

The composition is computed by Google's ``dp-accounting`` library (``dp_accounting``), used
directly: a run's mechanisms become its ``DpEvent`` values (a Gaussian event per release,
Poisson-sampled when the defence samples, self-composed over its releases, composed across
defences), and its privacy-loss-distribution (PLD) accountant gives epsilon; its Rényi (RDP)
accountant gives a second, looser figure as a cross-check. Chosen over Opacus's accountants
(PyTorch-bound, RDP and PRV built around DP-SGD's optimizer) and TF Privacy (which itself
delegates to ``dp-accounting``): it needs no deep-learning framework, holds both the tight
PLD accountant (Koskela, Jälkö and Honkela 2020; Doroshenko et al. 2022) and RDP (Mironov
2017) behind one event language, and is maintained by Google's differential privacy team.

The mechanisms are the defences' (:meth:`fedsec.interfaces.Defense.mechanism`) and the
protocol's own (:meth:`fedsec.interfaces.Protocol.mechanisms`: noise its settings add, such as
Flower's DP wrappers). Delta defaults to :data:`DEFAULT_DELTA` (1e-5): the usual choice for
record-level guarantees on datasets of 10^4 to 10^5 records (Abadi et al. 2016 on MNIST's
60,000), and far below 1/n for the few to few hundred parties a party-level guarantee protects.
Noise a party adds to its own values holds against every adversary, a coalition that reads a
party's contribution in the clear included; noise an aggregator adds to the aggregate (central
DP) protects what it releases, not the updates it received, so the guarantee does not hold
against that party (the block's ``trusted``). Masking backends add nothing to it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fedsec.errors import ValidationError
from fedsec.privacy.mechanism import Mechanism, backend_note

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.interfaces import Defense, Protocol

#: The delta epsilon is stated at, unless asked otherwise.
DEFAULT_DELTA = 1e-5
#: The accountants, the first the default.
ACCOUNTANTS = ("pld", "rdp")


def _library() -> Any:
    try:
        import dp_accounting
    except ImportError:  # pragma: no cover - a core dependency
        raise ValidationError("Accounting epsilon needs Google's dp-accounting library: "
                              "python -m pip install dp-accounting") from None
    return dp_accounting


def dp_event(mechanism: Mechanism) -> Any:
    """The ``dp_accounting`` event of one party's releases under ``mechanism``.

    A Gaussian event of noise multiplier ``noise_scale / sensitivity`` per release,
    Poisson-sampled at ``sampling_rate`` below 1, self-composed ``releases`` times.

    Examples
    --------
    >>> m = Mechanism(distribution="gaussian", noise_scale=3.0, sensitivity=1.5,
    ...               sensitivity_source="clipping", releases=4, unit="one party")
    >>> dp_event(m)
    SelfComposedDpEvent(event=GaussianDpEvent(noise_multiplier=2.0), count=4)
    """
    dpa = _library()
    if mechanism.noise_multiplier is None:
        who = mechanism.defense or (f"Protocol {mechanism.protocol!r}" if mechanism.protocol
                                    else "The defence")
        raise ValidationError(f"{who} relies on no sensitivity "
                              "bound, so its noise has no epsilon: set a clipping norm or "
                              "declare the data's sensitivity.")
    event = dpa.GaussianDpEvent(mechanism.noise_multiplier)
    if mechanism.sampling_rate < 1:
        event = dpa.PoissonSampledDpEvent(mechanism.sampling_rate, event)
    if mechanism.releases > 1:
        event = dpa.SelfComposedDpEvent(event, mechanism.releases)
    return event


def account(mechanisms: Sequence[Mechanism], *, delta: float = DEFAULT_DELTA,
            accountant: str = "pld") -> float:
    """Epsilon at ``delta`` of every mechanism composed (infinite when one adds no noise).

    Examples
    --------
    >>> m = Mechanism(distribution="gaussian", noise_scale=2.0, sensitivity=1.0,
    ...               sensitivity_source="clipping", releases=1, unit="one party")
    >>> round(account([m]), 3), round(account([m], accountant="rdp"), 3)
    (1.993, 2.166)
    """
    if accountant not in ACCOUNTANTS:
        raise ValidationError(f"accountant must be one of {ACCOUNTANTS}. Got {accountant!r} "
                              "instead.")
    if not 0 < delta < 1:
        raise ValidationError(f"delta must be in (0, 1). Got {delta!r} instead.")
    if not mechanisms:
        raise ValidationError("No mechanism to account: epsilon is stated only for noise "
                              "a defence adds.")
    if any(m.noise_scale == 0 for m in mechanisms):
        return math.inf
    dpa = _library()
    events = [dp_event(m) for m in mechanisms]
    event = events[0] if len(events) == 1 else dpa.ComposedDpEvent(events)
    if accountant == "pld":
        from dp_accounting.pld import pld_privacy_accountant

        engine: Any = pld_privacy_accountant.PLDAccountant()
    else:
        from dp_accounting.rdp import rdp_privacy_accountant

        engine = rdp_privacy_accountant.RdpAccountant()
    engine.compose(event)
    return float(engine.get_epsilon(delta))


def privacy_summary(mechanisms: Sequence[Mechanism], *, backend: str,
                    delta: float = DEFAULT_DELTA) -> dict[str, Any]:
    """The ``privacy`` block of a run's results: epsilon (PLD) and delta, the RDP cross-check,
    the mechanisms it was computed from, the parties it does not hold against (``trusted``:
    they see values before the noise), and what the backend adds (nothing).

    ``epsilon`` is None, with a ``reason``, when no defence adds noise or one relies on no
    sensitivity bound; ``noised`` says whether some defence (or protocol setting) adds noise
    (a claim an audit's gate checks).

    Examples
    --------
    >>> privacy_summary([], backend="paillier")["reason"]
    'no defence or protocol setting adds noise; the paillier backend encrypts values and ...'
    """
    out: dict[str, Any] = {"epsilon": None, "epsilon_rdp": None, "delta": delta,
                           "accountant": "pld", "noised": bool(mechanisms),
                           "mechanisms": [m.to_json() for m in mechanisms],
                           "trusted": sorted({p for m in mechanisms for p in m.trusted}),
                           "backend": backend_note(backend)}
    unbounded = [m.declared_by for m in mechanisms if m.sensitivity is None]
    if not mechanisms:
        out["reason"] = (f"no defence or protocol setting adds noise; the {backend} backend "
                         f"{backend_note(backend)}")
    elif unbounded:
        out["reason"] = (f"{', '.join(unbounded)} adds noise but relies on no sensitivity "
                         "bound (it clips nothing and no data range is declared), so no "
                         "epsilon is stated")
    else:
        epsilon = account(mechanisms, delta=delta)
        if math.isinf(epsilon):
            silent = ", ".join(m.declared_by for m in mechanisms if m.noise_scale == 0)
            out["reason"] = f"{silent} declares noise of scale 0: epsilon is infinite"
        else:
            out["epsilon"] = epsilon
            out["epsilon_rdp"] = account(mechanisms, delta=delta, accountant="rdp")
            out["unit"] = "; ".join(sorted({m.unit for m in mechanisms}))
    return out


def run_privacy(defenses: Sequence[Defense], protocol_params: Mapping[str, Any], *,
                backend: str, delta: float = DEFAULT_DELTA,
                protocol: Protocol | None = None) -> dict[str, Any]:
    """:func:`privacy_summary` of a run's defences (the protocol's parameters as they
    configured them, the backend's name) and of the noise ``protocol``'s own settings add."""
    found = [d.mechanism(protocol_params) for d in defenses]
    set_by_defences = {key for d in defenses for key in d.sets.values()}
    own = [m for m in (protocol.mechanisms() if protocol is not None else ())
           if not (m.parameters and set(m.parameters) <= set_by_defences)]
    return privacy_summary([*own, *(m for m in found if m is not None)], backend=backend,
                           delta=delta)


def described_privacy(defenses: Sequence[Mapping[str, Any]], protocol: Mapping[str, Any],
                      backend: Mapping[str, Any], *, delta: float = DEFAULT_DELTA
                      ) -> dict[str, Any]:
    """:func:`run_privacy` from the components' descriptions in a run's record (``name`` and
    ``params`` each, as ``describe()`` gives them): each defence, and the protocol (for the
    noise its own settings add), is built again from the registry. A component the registry
    cannot build leaves epsilon unstated, saying why."""
    from fedsec import registry
    from fedsec.errors import FedsecError

    backend_name = str(backend.get("name", ""))
    params = dict(protocol.get("params", {}))
    built = []
    for described in defenses:
        try:
            built.append(registry.create("defense", str(described["name"]),
                                         dict(described.get("params", {}))))
        except FedsecError as error:
            summary = privacy_summary([], backend=backend_name, delta=delta)
            return {**summary, "noised": True,
                    "reason": f"defence {described.get('name')!r} could not be rebuilt to read "
                              f"its mechanism: {error}"}
    try:
        rebuilt = registry.create("protocol", str(protocol["name"]), params)
    except FedsecError as error:
        summary = run_privacy(built, params, backend=backend_name, delta=delta)
        return {**summary, "epsilon": None, "epsilon_rdp": None,
                "reason": f"protocol {protocol.get('name')!r} could not be rebuilt to read the "
                          f"noise its settings add: {error}"}
    return run_privacy(built, params, backend=backend_name, delta=delta, protocol=rebuilt)
