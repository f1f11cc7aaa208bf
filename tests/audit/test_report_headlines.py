"""The report's findings in words: ranges instead of lists, the worst leak first (by harm,
then advantage as printed, then accuracy), the masking backend said to change nothing only
when it does not, what stops each attack (each stopper with its own cost), and verdicts that
say no more than the scorer measured."""

from __future__ import annotations

from typing import Any

import numpy as np

from fedsec.report.headlines import headlines, worst_leak
from fedsec.report.ranges import cover
from fedsec.report.stops import what_stops
from fedsec.report.wording import level, what

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
    assert "recovers (nearly) exactly the records of hospital1 and hospital2 at m ≥ 3 " \
           "(advantage 1.00)" in sentence
    assert "a large part of them at m = 2 (advantage 0.65)" in sentence
    assert "The masking backend changes nothing: ckks, noise and plain" in sentence
    assert "m=3" not in sentence and "m=5" not in sentence  # no list of configurations


def test_a_backend_that_changes_the_result_is_named_not_called_inert() -> None:
    found = headlines(grid(lambda b, m: 1.0 if b == "plain" else 0.0))
    (sentence,) = found[0]["sentences"]
    assert "changes nothing" not in sentence
    assert "hospital2 at every m from 2 to 20, under plain" in sentence
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
    assert line.startswith("What stops multilateration as server: noise (sigma 1) (it falls "
                           "to its naive baseline, having converged; accuracy change -0.05 "
                           "against no defence); noise (sigma 10) (")
    assert "noise (sigma 10) (it falls to its naive baseline, having converged; accuracy " \
           "change -0.35 against no defence)" in line
    assert "-0.35 to -0.05" not in line  # each stopper with its own cost, never one range
    assert "It still gains over its naive baseline without defence or with noise (sigma = " \
           "0.1)" in line


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
    assert what(TARGETS, "the column space of {what}") == (
        "the column space of the data of hospital1 and hospital2")


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
    assert "falls to its naive baseline" not in line and "What stops" not in line
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
    assert "What stops multilateration as server: noise (sigma 1) (it falls to its naive " \
           "baseline, having converged" in line
    assert "sigma 5) (" not in line
    assert "without converging with noise (sigma = 5) (inconclusive" in line
    everywhere = what_stops([config(0.0, m=3, converged=False)])
    assert everywhere == ["Nothing in this audit is shown to stop multilateration as server: it "
                          "stays at its naive baseline but did not converge wherever it applies "
                          "(inconclusive, not evidence of protection)."]


GRAM = ["outcome/gram/total"]


def test_the_worst_leak_is_ranked_by_harm_then_advantage_as_printed_then_accuracy() -> None:
    configs = [config(0.99999999996, protocol="secure", m=2, acc=0.53, targets=GRAM,
                      attack="gram-inference"),
               config(0.99999999990, m=3, acc=0.84), config(0.9999999999, m=10, acc=0.92),
               config(0.02, m=20, acc=0.95, attack="idle")]
    worst = str(worst_leak(configs))
    assert worst.startswith("server recovers (nearly) exactly the records of hospital1 and "
                            "hospital2 with multilateration (advantage 1.00) in naive | plain | "
                            "no defence | m=10, accuracy 0.92")
    assert "1 other result of this audit reach the same advantage on individual records" in worst
    found = headlines(configs)
    assert found[0]["sentences"][0].startswith("With multilateration")
    # a Gram matrix recovered exactly is still worse than records at the baseline
    assert "Gram" in str(worst_leak([configs[0], config(0.0, m=3)]))


def test_a_leak_is_put_in_words_at_the_precision_it_is_printed() -> None:
    assert level(0.8999, 2) == "exact" and level(0.0999, 2) == "partial"
    assert level(-0.1001, 2) == "none"


def test_a_column_space_verdict_never_says_records() -> None:
    from fedsec.report.verdicts import attack_verdict

    (entry,) = config(0.999, targets=TARGETS)["attacks"]
    entry["recovers"] = "the column space of {what}"
    verdict = attack_verdict(entry)
    assert verdict == ("server recovers (nearly) exactly the column space of the data of "
                       "hospital1 and hospital2 with multilateration (advantage 1.00).")
    (sentence,) = headlines([{**config(0.999), "attacks": [entry]}])[0]["sentences"]
    assert "records" not in sentence and "column space of the data" in sentence


def blocked(cfg: dict[str, Any], why: str, reason: str = "observed no kernel block"
            ) -> dict[str, Any]:
    cfg["attacks"][0].update(status="not applicable", blocked_by=why, reason=reason,
                             metrics={}, targets=[])
    return cfg


def test_a_backend_that_keeps_the_messages_away_is_credited_with_its_own_cost() -> None:
    configs = [config(1.0, m=m, acc=0.9) for m in (3, 5)]
    configs += [blocked(config(None, backend="noise", m=m, acc=0.88), "configuration")
                for m in (3, 5)]
    configs += [blocked(config(None, protocol="other", m=m, acc=0.7), "protocol", "no tag x")
                for m in (3, 5)]
    (line,) = what_stops(configs)
    assert line.startswith("What stops multilateration as server: the noise backend, for naive "
                           "(it cannot run: observed no kernel block; accuracy change -0.02 "
                           "against the plain backend).")
    assert "It still gains over its naive baseline for naive, at every m from 3 to 5, under " \
           "plain." in line
    assert line.endswith("It targets another protocol: it does not apply for other, under plain "
                         "(no tag x).")
    (sentence,) = headlines(configs)[0]["sentences"]
    assert sentence.endswith("Where the configuration keeps what it reads from server, it "
                             "cannot run: for naive, under noise (observed no kernel block). It "
                             "targets another protocol: it does not apply for other, under "
                             "plain (no tag x).")


def test_a_protocol_variant_that_stops_an_attack_lets_another_in() -> None:
    configs = [config(1.0, m=m, acc=0.9) for m in (3, 5)]
    for m in (3, 5):
        secure = blocked(config(None, protocol="secure", m=m, acc=0.9), "configuration")
        secure["attacks"] += config(0.99, protocol="secure", m=m, targets=GRAM,
                                    attack="gram-inference")["attacks"]
        configs.append(secure)
    configs[0]["attacks"] += blocked(config(None, m=3, attack="gram-inference"),
                                     "protocol", "no gram product")["attacks"]
    lines = what_stops(configs)  # the records' attack first, as in the headlines
    assert lines[0].startswith("What stops multilateration as server: choosing secure over "
                               "naive (it cannot run: observed no kernel block; accuracy change "
                               "+0.00 against naive; it lets gram-inference in).")
    assert lines[1].startswith("Nothing in this audit stops gram-inference as server")
    assert lines[1].endswith("It targets another protocol: it does not apply for naive, at m = 3 "
                             "(no gram product), where multilateration applies instead.")
