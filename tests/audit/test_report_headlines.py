"""The report's findings in words: ranges instead of lists, the worst leak first, the masking
backend said to change nothing only when it does not, and what stops each attack."""

from __future__ import annotations

from typing import Any

import numpy as np

from fedsec.report.headlines import headlines, level, what, what_stops, worst_leak
from fedsec.report.ranges import cover

TARGETS = ["party/hospital1/shard/cell0/X", "party/hospital2/shard/cell0/X"]


def config(adv: float | None, *, protocol: str = "naive", backend: str = "plain",
           m: int = 3, defence: dict[str, Any] | None = None, acc: float | None = 0.9,
           threat: str = "server", status: str = "ok",
           targets: list[str] | None = None, converged: bool | None = True,
           attack: str = "multilateration") -> dict[str, Any]:
    metrics = {} if adv is None else {"advantage": {"mean": adv}}
    name = f"{protocol} | {backend} | {defence['name'] if defence else 'no defence'} | m={m}"
    return {"configuration": name, "accuracy": {"mean": acc},
            "config": {"protocol": protocol, "backend": backend, "dataset": "",
                       "defense": defence, "params": {"m": m}},
            "attacks": [{"attack": attack, "threat": threat, "status": status,
                         "scorer": "point-recovery", "reason": "no kernel blocks",
                         "targets": TARGETS if targets is None else targets,
                         "metrics": metrics, "converged": converged}]}


def grid(advantage: Any, backends: tuple[str, ...] = ("plain", "noise", "ckks"),
         ms: tuple[int, ...] = (2, 3, 5, 10, 20)) -> list[dict[str, Any]]:
    return [config(advantage(b, m), backend=b, m=m) for b in backends for m in ms]


def test_sweep_values_read_as_ranges_and_the_backend_is_said_to_change_nothing() -> None:
    found = headlines(grid(lambda b, m: 0.65 if m == 2 else 1.0))
    (sentence,) = found[0]["sentences"]
    assert "(nearly) exactly at m ≥ 3 (advantage 1.00)" in sentence
    assert "a large part of them at m = 2 (advantage 0.65)" in sentence
    assert "The masking backend changes nothing: ckks, noise and plain" in sentence
    assert "m=3" not in sentence and "m=5" not in sentence  # no list of configurations


def test_a_backend_that_changes_the_result_is_named_not_called_inert() -> None:
    found = headlines(grid(lambda b, m: 1.0 if b == "plain" else 0.0))
    (sentence,) = found[0]["sentences"]
    assert "changes nothing" not in sentence
    assert "(nearly) exactly at every m from 2 to 20, under plain" in sentence
    assert "nothing about them beyond the naive baseline at every m from 2 to 20, under ckks " \
           "or noise" in sentence


def test_the_adversary_with_the_worst_leak_comes_first() -> None:
    configs = [config(0.3, threat="client"), config(0.95, m=5)]
    configs[0]["attacks"] += config(0.2, threat="eavesdropper")["attacks"]
    configs[1]["attacks"] += config(0.99, m=5, threat="client")["attacks"]
    order = [h["adversary"] for h in headlines(configs)]
    assert order == ["client", "server", "eavesdropper"]
    assert worst_leak(configs) is not None
    assert "client recovers" in str(worst_leak(configs))


def test_an_attack_worse_than_its_baseline_is_not_called_a_match() -> None:
    assert level(-0.8, 2) == "worse"
    (sentence,) = headlines([config(-0.8)])[0]["sentences"]
    assert "does worse on the records of hospital1 and hospital2" in sentence


def test_where_an_attack_does_not_apply_is_said_once_with_its_reason() -> None:
    configs = grid(lambda b, m: 1.0, backends=("plain",))
    configs += [config(None, protocol="secure", m=m, status="not applicable", targets=[])
                for m in (2, 3, 5, 10, 20)]
    (sentence,) = headlines(configs)[0]["sentences"]
    assert sentence.endswith("It does not apply for secure (no kernel blocks).")


def test_what_stops_names_the_defence_setting_and_its_accuracy_cost() -> None:
    configs = [config(1.0, m=m, acc=0.95) for m in (3, 5)]
    for sigma, adv, acc in ((0.1, 0.8, 0.94), (1.0, 0.02, 0.90), (10.0, -0.3, 0.60)):
        configs += [config(adv, m=m, acc=acc,
                           defence={"name": "noise", "params": {"sigma": sigma}})
                    for m in (3, 5)]
    (line,) = what_stops(configs)
    assert line.startswith("multilateration as server falls to its naive baseline, having "
                           "converged, with noise (sigma ≥ 1)")
    assert "accuracy change against no defence -0.35 to -0.05" in line
    assert "it still gains over it without defence or with noise (sigma = 0.1)" in line


def test_nothing_stops_an_attack_that_leaks_everywhere() -> None:
    configs = [config(1.0, m=3), config(0.9, m=3, defence={"name": "noise",
                                                           "params": {"sigma": 0.1}})]
    (line,) = what_stops(configs)
    assert line.startswith("Nothing in this audit stops multilateration as server")
    assert "under noise (sigma 0.1) too" in line


def test_scattered_configurations_are_counted_not_listed() -> None:
    ms = tuple(range(2, 30))
    found = headlines(grid(lambda b, m: 1.0 if (m * 7 + len(b)) % 3 else 0.0, ms=ms))
    assert "at 9 of the 28 values of m (4 to 28), under noise or plain" in found[0]["sentences"][0]
    coin = np.random.default_rng(0).random((10, 10)) < 0.5
    found = headlines([config(1.0 if coin[b, m] else 0.0, backend=f"b{b}", m=m)
                       for b in range(10) for m in range(10)])
    assert "configurations scattered over the grid" in found[0]["sentences"][0]


def test_targets_in_words_and_the_scorers_template() -> None:
    assert what(TARGETS) == "the records of hospital1 and hospital2"
    assert what(["outcome/gram/cohort0", "outcome/gram/total"]) == (
        "the Gram matrix of cohort0 and the total Gram matrix")
    assert what(["my-own-target"], "the column space of {what}") == (
        "the column space of my-own-target")


def test_boxes_cover_exactly_the_points() -> None:
    points = {(b, m) for b in "xyz" for m in (1, 2, 3) if not (b == "z" and m == 3)}
    boxes = cover(points, 2)
    covered = {(b, m) for first, second in boxes for b in first for m in second}
    assert covered == points
    assert len(boxes) == 2


def test_a_failure_that_did_not_converge_never_stops_an_attack() -> None:
    configs = [config(1.0, m=3), config(1.0, m=5)]
    configs += [config(0.01, m=m, converged=c, defence={"name": "noise",
                                                        "params": {"sigma": 5.0}})
                for m, c in ((3, False), (5, None))]
    (line,) = what_stops(configs)
    assert line.startswith("Nothing in this audit stops multilateration as server")
    assert "falls to its naive baseline" not in line
    assert ("without converging with noise (sigma = 5), at every m from 3 to 5 (inconclusive, "
            "not evidence of protection)") in line
    (sentence,) = headlines(configs)[0]["sentences"]
    assert "without converging (inconclusive" in sentence
    assert "learns nothing" not in sentence


def test_only_converged_failures_are_said_to_stop_it() -> None:
    configs = [config(1.0, m=3)]
    configs += [config(0.0, m=3, converged=c, defence={"name": "noise",
                                                       "params": {"sigma": s}})
                for s, c in ((1.0, True), (5.0, False))]
    (line,) = what_stops(configs)
    assert "falls to its naive baseline, having converged, with noise (sigma = 1)" in line
    assert "without converging with noise (sigma = 5) (inconclusive" in line
    everywhere = what_stops([config(0.0, m=3, converged=False)])
    assert everywhere == ["Nothing in this audit is shown to stop multilateration as server: it "
                          "stays at its naive baseline but did not converge wherever it applies "
                          "(inconclusive, not evidence of protection)."]
