"""Epsilon in the report: the accountant's, the empirical lower bound, and what attacks rebuild.

Per configuration and adversary, one row holds the three figures an auditor weighs together:
the accountant's epsilon at its delta for the noise the defences declare
(:mod:`fedsec.privacy.accountant`; the same for every adversary, since it counts only each
party's own noise), the one-run empirical lower bound that adversary's canary guesses give
(:mod:`fedsec.scoring.canaries`: mean and 95% interval over seeds, its confidence and the
ceiling its canaries allow) and the strongest reconstruction any other attack reached. A lower
bound above the accountant's epsilon in some run is flagged in a sentence: the defence adds
less noise than it declares, or declares too small a sensitivity. :func:`privacy_png` draws the
three against a defence's swept noise parameter.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from fedsec.privacy.mechanism import trusted_among
from fedsec.report.plots import _figure, _png, legends_below, title_height, wrapped
from fedsec.report.precision import show_advantage
from fedsec.report.wording import advantage_of, leak_rank

#: A plotted point: the parameter's value, the mean bound, its interval, the strongest
#: reconstruction's advantage.
Point = tuple[float, "float | None", "list[float] | None", "float | None"]
#: The metric an attack entry reports its empirical bound as.
BOUND = "empirical_epsilon"
PRIVACY_HEAD = ["configuration", "adversary", "accountant epsilon (delta)",
                "empirical lower bound [95% CI over seeds]", "bound's confidence, ceiling",
                "strongest reconstruction"]
PRIVACY_NOTE = ("Per configuration and adversary: the accountant's epsilon for the noise the "
                "defences (or the protocol's own settings) declare (the same for every "
                "adversary but one that sees values before the noise is added, such as central "
                "DP's server), the one-run empirical lower bound from that adversary's canary "
                "guesses (against the Gaussian mechanism's trade-off curve, Mahloujifar, Melis "
                "and Chaudhuri 2024, by default; against any (epsilon, delta)-DP mechanism, "
                "Steinke, Nasr and Jagielski 2023, with claim = 'any'), and the strongest "
                "other attack. "
                "A lower bound above the accountant's epsilon is a bug in a defence or in what "
                "it declares.")


def exceeding(cells: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every (run, adversary) whose empirical lower bound exceeds its run's accountant epsilon
    (an adversary that includes a party the epsilon does not hold against cannot exceed it).

    Examples
    --------
    >>> cell = {"configuration": "c", "status": "ok", "config": {"seed": 0},
    ...         "privacy": {"noised": True, "epsilon": 2.0, "delta": 1e-5},
    ...         "attacks": [{"attack": "canary-guess", "threat": "server", "status": "ok",
    ...                      "scores": {"empirical_epsilon": 3.1, "confidence": 0.95}}]}
    >>> [(e["configuration"], e["bound"], e["epsilon"]) for e in exceeding([cell])]
    [('c', 3.1, 2.0)]
    >>> cell["privacy"]["trusted"] = ["server"]  # central DP's server: no epsilon against it
    >>> exceeding([cell])
    []
    """
    out = []
    for cell in cells:
        privacy = cell.get("privacy") or {}
        stated = privacy.get("epsilon") if cell.get("status") == "ok" else None
        if not isinstance(stated, (int, float)) or not math.isfinite(stated):
            continue
        for attack in cell.get("attacks", []):
            bound = (attack.get("scores") or {}).get(BOUND)
            if attack.get("status") == "ok" and isinstance(bound, (int, float)) \
                    and bound > stated and not trusted_among(privacy, attack["threat"]):
                out.append({"configuration": cell["configuration"], "threat": attack["threat"],
                            "attack": attack["attack"], "seed": cell["config"]["seed"],
                            "bound": float(bound), "epsilon": float(stated),
                            "delta": privacy.get("delta"),
                            "confidence": attack["scores"].get("confidence")})
    return out


def privacy_sentences(configs: Sequence[Mapping[str, Any]],
                      cells: Sequence[Mapping[str, Any]]) -> list[str]:
    """The report's sentences on epsilon: one per configuration and adversary whose lower
    bound exceeds the accountant's epsilon in some run, or one saying none does (nothing when
    the audit measured no empirical bound)."""
    found = exceeding(cells)
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for item in found:
        grouped[(item["configuration"], item["threat"])].append(item)
    out = []
    for (configuration, threat), items in sorted(grouped.items()):
        worst = max(items, key=lambda item: item["bound"] - item["epsilon"])
        seeds = ", ".join(str(s) for s in sorted({item["seed"] for item in items}))
        out.append(f"In {configuration}, {threat}'s canary guesses prove epsilon >= "
                   f"{worst['bound']:.3g} at {_percent(worst['confidence'])} confidence, "
                   f"above the accountant's {worst['epsilon']:.3g} at delta "
                   f"{worst['delta']:g} (seed{'s' * (len(items) > 1)} {seeds}): the defence "
                   "adds less noise than it declares, or declares too small a sensitivity.")
    if out:
        return out
    audited = [(c, a) for c in configs for a in c["attacks"] if _bound(a) is not None
               and _stated(c) is not None]
    if not audited:
        return []
    config, attack = max(audited, key=lambda item: (_bound(item[1]) or 0.0)
                         / (_stated(item[0]) or math.inf))
    return [f"No configuration's empirical lower bound exceeds its accountant epsilon "
            f"({len(audited)} configuration-adversary pairs audited; the closest, "
            f"{attack['threat']} in {config['configuration']}, proves epsilon >= "
            f"{_bound(attack):.3g} of the accountant's {_stated(config):.3g})."]


def privacy_rows(configs: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """The report's epsilon table: one row per configuration and adversary that measured an
    empirical bound or runs under a noise-adding defence."""
    rows = []
    for config in configs:
        privacy = config.get("privacy") or {}
        by_threat: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for attack in config["attacks"]:
            by_threat[attack["threat"]].append(attack)
        for threat, attacks in by_threat.items():
            audit = next((a for a in attacks if _bound(a) is not None), None)
            if audit is None and not privacy.get("noised"):
                continue
            rows.append([config["configuration"], threat, _accountant(privacy, threat),
                         _interval(audit), _confidence(audit), _strongest(attacks)])
    return rows


def _accountant(privacy: Mapping[str, Any], threat: str = "") -> str:
    """The accountant's figure for one adversary (``threat``: its parties, comma-separated).

    Examples
    --------
    >>> central = {"epsilon": 2.0, "delta": 1e-5, "noised": True, "trusted": ["server"]}
    >>> _accountant(central, "client1")
    '2 (delta 1e-05)'
    >>> _accountant(central, "server,client1")
    'none against server: it sees the values before the noise (2 for what it releases)'
    """
    epsilon = privacy.get("epsilon")
    trusted = trusted_among(privacy, threat)
    if trusted:
        stated = "" if epsilon is None else f" ({epsilon:.3g} for what it releases)"
        return (f"none against {', '.join(trusted)}: it sees the values before the "
                f"noise{stated}")
    if epsilon is not None:
        return f"{epsilon:.3g} (delta {privacy.get('delta'):g})"
    if not privacy.get("noised"):
        return "none: no defence or protocol setting adds noise"
    return f"none stated: {privacy.get('reason') or 'no sensitivity bound'}"


def _interval(audit: Mapping[str, Any] | None) -> str:
    if audit is None:
        return "— (no canary audit)"
    stat = audit["metrics"][BOUND]
    text = f"{stat['mean']:.3g}"
    if stat.get("ci"):
        text += f" [{max(stat['ci'][0], 0.0):.3g}, {stat['ci'][1]:.3g}]"
    return text


def _confidence(audit: Mapping[str, Any] | None) -> str:
    if audit is None:
        return "—"
    metrics = audit["metrics"]
    confidence = (metrics.get("confidence") or {}).get("mean")
    ceiling = (metrics.get("empirical_ceiling") or {}).get("mean")
    canaries = (metrics.get("n_canaries") or {}).get("mean")
    parts = [f"{_percent(confidence)} each run"]
    if ceiling is not None:
        parts.append(f"ceiling {ceiling:.3g}" + (f" ({canaries:.0f} canaries)"
                                                 if canaries is not None else ""))
    return ", ".join(parts)


def _strongest(attacks: Sequence[Mapping[str, Any]]) -> str:
    """The strongest reconstruction among the attacks that are not canary audits."""
    scored = [a for a in attacks if a["status"] == "ok" and _bound(a) is None
              and advantage_of(a) is not None]
    if not scored:
        return "—"
    best = min(scored, key=leak_rank)
    return f"{best['attack']}: advantage {show_advantage(advantage_of(best) or 0.0)}"


def _bound(attack: Mapping[str, Any]) -> float | None:
    value = (attack.get("metrics") or {}).get(BOUND, {}).get("mean")
    return None if attack.get("status") != "ok" or value is None else float(value)


def _stated(config: Mapping[str, Any]) -> float | None:
    value = (config.get("privacy") or {}).get("epsilon")
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def _percent(value: Any) -> str:
    return "?" if value is None else f"{100 * float(value):.0f}%"


def privacy_png(configs: Sequence[Mapping[str, Any]], defence: str,
                parameter: str) -> bytes | None:
    """The accountant's epsilon, each adversary's empirical lower bound (its interval over
    seeds shaded) and the strongest reconstruction's advantage against one of ``defence``'s
    parameters (None when no configuration of that defence measured an empirical bound)."""
    lines: dict[str, list[Point]] = defaultdict(list)
    accountant: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for config in configs:
        c = config["config"]
        value = (c["defense"] or {}).get("params", {}).get(parameter)
        if (c["defense"] or {}).get("name") != defence or not isinstance(value, (int, float)):
            continue
        others = [f"{k}={v}" for k, v in sorted(c["defense"]["params"].items())
                  if k != parameter]
        family = " / ".join([c["backend"], *others, *(f"{k}={v}" for k, v in
                                                      sorted(c["params"].items())
                                                      if not k.startswith("canar"))])
        if _stated(config) is not None:  # the accountant ignores the backend: one line
            accountant[", ".join(others) or defence].append(
                (float(value), float(_stated(config) or 0.0)))
        by_threat: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for attack in config["attacks"]:
            by_threat[attack["threat"]].append(attack)
        for threat, attacks in by_threat.items():
            audit = next((a for a in attacks if _bound(a) is not None), None)
            if audit is None:
                continue
            scored = [a for a in attacks if a["status"] == "ok" and _bound(a) is None
                      and advantage_of(a) is not None]
            best = advantage_of(min(scored, key=leak_rank)) if scored else None
            lines[f"{family}: {threat}"].append(
                (float(value), _bound(audit), audit["metrics"][BOUND].get("ci"), best))
    if not lines:
        return None
    return _draw(lines, accountant, defence, parameter)


def _draw(lines: Mapping[str, list[Point]],
          accountant: Mapping[str, list[tuple[float, float]]], defence: str,
          parameter: str) -> bytes:
    plt = _figure()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=110)
    for i, (family, found) in enumerate(sorted(accountant.items())):
        stated = sorted(set(found))
        left.plot([p[0] for p in stated], [p[1] for p in stated], color="black",
                  ls=("-", "--", ":", "-.")[i % 4], marker="s", markersize=3,
                  label=f"accountant epsilon ({family})")
    for i, (label, found_points) in enumerate(sorted(lines.items())):
        points = sorted(found_points, key=lambda p: p[0])
        xs = [p[0] for p in points]
        colour = f"C{i % 10}"
        left.plot(xs, [math.nan if p[1] is None else p[1] for p in points], marker="o",
                  color=colour, label=f"empirical lower bound: {label}")
        spans = [(p[0], p[2]) for p in points if p[2]]
        if spans:
            left.fill_between([x for x, _ in spans], [max(ci[0], 0.0) for _, ci in spans],
                              [ci[1] for _, ci in spans], color=colour, alpha=0.15)
        right.plot(xs, [math.nan if p[3] is None else p[3] for p in points], marker="o",
                   color=colour, label=f"strongest reconstruction: {label}")
    left.set_yscale("symlog", linthresh=1.0)
    left.set_ylabel("epsilon")
    right.set_ylabel("advantage of the strongest reconstruction")
    for ax in (left, right):
        ax.set_xlabel(f"{defence}: {parameter}")
        ax.grid(alpha=0.3)
    title = wrapped(f"Accountant epsilon, empirical lower bound and reconstruction against "
                    f"{defence}'s {parameter}", 11, 10)
    fig.suptitle(title, fontsize=10)
    legends_below(fig, [left, right], fontsize=6, axes_height=3.3, left=0.07, right=0.985,
                  wspace=0.22, top_in=title_height(title, 10))
    return _png(fig, plt)
