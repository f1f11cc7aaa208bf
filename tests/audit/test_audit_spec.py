"""Scenario validation: every problem listed at once, before anything runs."""

from __future__ import annotations

import pytest

from fedsec.audit.spec import AuditSpecError, parse_spec

GOOD = {
    "audit": {"name": "t", "protocols": ["secure-sum"], "dataset": "iris",
              "backends": ["plain", "noise"], "seeds": [0, 1]},
    "sweep": {"statistic": ["sum", "moments"]},
    "defenses": [{"name": "gaussian-noise", "sigma": [0.5, 2.0]}],
    "attacks": [{"name": "contribution-readout", "as": ["aggregator"]}],
}


def test_a_good_scenario_expands_into_its_grid() -> None:
    spec = parse_spec(GOOD)
    cells = spec.cells()
    # 1 protocol x 2 backends x (none + 2 defence settings) x 2 statistics x 2 seeds
    assert len(cells) == 24
    assert len({c.id for c in cells}) == 24
    assert {c.configuration.split(" | ")[2] for c in cells} == {
        "no defence", "gaussian-noise:sigma=0.5", "gaussian-noise:sigma=2.0"}


def test_ranges_and_repetitions() -> None:
    ranged = parse_spec({"audit": {"protocols": ["fedcg-secure"], "dataset": "iris",
                                   "repetitions": 3},
                         "sweep": {"n_landmarks": {"start": 5, "stop": 20, "step": 5},
                                   "regularization": {"start": 0.001, "stop": 0.1, "num": 3}},
                         "attacks": [{"name": "gram-inference", "as": "server"}]})
    assert ranged.seeds == (0, 1, 2)
    assert ranged.sweep["n_landmarks"] == (5, 10, 15, 20)
    assert ranged.sweep["regularization"] == pytest.approx((0.001, 0.0505, 0.1))


def test_every_problem_is_reported_at_once() -> None:
    bad = {
        "audit": {"protocols": ["secure-sum", "no-such-protocol"], "dataset": "irris",
                  "backends": ["plain", "rot13"], "seeds": [-1], "colour": "red"},
        "sweep": {"statistic": ["median"]},
        "defenses": [{"name": "random-landmarks"}, {"name": "nope"}],
        "attacks": [{"name": "multilateration", "as": ["server"]},
                    {"name": "contribution-readout", "as": ["mallory"]},
                    {"name": "contribution-readout"}],
    }
    with pytest.raises(AuditSpecError) as info:
        parse_spec(bad, source="bad.toml")
    problems = "\n".join(info.value.problems)
    for needle in ("unknown key audit.colour", "Unknown protocol 'no-such-protocol'",
                   "Valid protocol names", "Unknown dataset 'irris'", "Unknown backend 'rot13'",
                   "audit.seeds must be", "'statistic' parameter",
                   "defence 'random-landmarks' applies to none of the protocols",
                   "Unknown defense 'nope'",
                   "attack 'multilateration' applies to none of the protocols",
                   "needs a name and 'as'"):
        assert needle in problems, needle
    assert len(info.value.problems) >= 10


def test_threat_models_must_name_parties_of_the_runs() -> None:
    bad = {**GOOD, "attacks": [{"name": "contribution-readout", "as": ["mallory", "party1,eve"]}]}
    with pytest.raises(AuditSpecError) as info:
        parse_spec(bad)
    assert len(info.value.problems) == 2
    assert all("Valid party names: aggregator, party1" in p for p in info.value.problems)


def test_backend_lacking_an_operation_is_named() -> None:
    from fedsec.backends.plain import PlainBackend
    from fedsec.registry import register, unregister

    @register("backend", "sumless")
    class Sumless(PlainBackend):
        operations = frozenset({"add"})

    try:
        with pytest.raises(AuditSpecError, match="'sum' \\(available in"):
            parse_spec({**GOOD, "audit": {**GOOD["audit"], "backends": ["sumless"]}})
    finally:
        unregister("backend", "sumless")


def test_dataset_specs_with_options_are_checked_before_running() -> None:
    good = {**GOOD, "audit": {**GOOD["audit"], "dataset": None,
                              "datasets": ["iris:positive=setosa", "heart:target=num"]}}
    spec = parse_spec(good)
    assert spec.datasets == ("iris:positive=setosa", "heart:target=num")
    bad = {**GOOD, "audit": {**GOOD["audit"], "dataset": None,
                             "datasets": ["iris:positive=daisy", "wine:colour=red"]}}
    with pytest.raises(AuditSpecError) as info:
        parse_spec(bad)
    problems = "\n".join(info.value.problems)
    assert "has no class 'daisy'" in problems and "Unknown option(s) 'colour'" in problems


def test_a_sweep_value_the_data_cannot_hold_is_refused_before_anything_runs() -> None:
    raw = {"audit": {"protocols": ["fedcg-naive"], "dataset": "iris:positive=setosa"},
           "sweep": {"n_landmarks": [5, 200]},
           "attacks": [{"name": "multilateration", "as": "server"}]}
    with pytest.raises(AuditSpecError) as info:
        parse_spec(raw)
    assert len(info.value.problems) == 1
    assert "n_landmarks=200 P landmarks are training rows, but the training set has 112" in (
        info.value.problems[0])
    random = {**raw, "params": {"landmark_method": "U"}}
    assert len(parse_spec(random).cells()) == 2  # random landmarks need no rows


def with_audit(**changes: object) -> dict[str, object]:
    return {**GOOD, "audit": {**GOOD["audit"], **changes}}  # type: ignore[dict-item]


@pytest.mark.parametrize(("changes", "message"), [
    ({"protocols": 5}, "must be a name or a list of names"),
    ({"scaling": []}, "audit.scaling must be a name"),
    ({"scaling": "zscore"}, "accepts the scalings minmax, standard, none"),
])
def test_wrongly_typed_values_are_problems_not_crashes(changes: dict[str, object],
                                                       message: str) -> None:
    with pytest.raises(AuditSpecError, match=message):
        parse_spec(with_audit(**changes))


def test_oversized_sweeps_and_grids_are_refused_at_once() -> None:
    huge = {**GOOD, "sweep": {"statistic": {"start": 0, "stop": 10**8}}}
    with pytest.raises(AuditSpecError, match="more than 10,000 values"):
        parse_spec(huge)
    with pytest.raises(AuditSpecError, match="asks for 100,000,000 values"):
        parse_spec({**GOOD, "sweep": {"statistic": {"start": 0, "stop": 1, "num": 10**8}}})
    grid = {**GOOD, "sweep": {"a": list(range(1000)), "b": list(range(1000))}}
    with pytest.raises(AuditSpecError, match="the grid has 12,000,000 cells; at most 100,000"):
        parse_spec(grid)
    with pytest.raises(AuditSpecError, match="num must be at least 1"):
        parse_spec({**GOOD, "sweep": {"statistic": {"start": 0, "stop": 1, "num": -2}}})
    with pytest.raises(AuditSpecError, match="needs finite numbers"):
        parse_spec({**GOOD, "sweep": {"statistic": {"start": "a", "stop": 3}}})


@pytest.mark.parametrize(("changes", "message"), [
    ({"repetitions": 3}, "audit.seeds and audit.repetitions conflict"),
    ({"protocol": "secure-sum"}, "audit.protocols and audit.protocol conflict"),
    ({"backend": "plain"}, "audit.backends and audit.backend conflict"),
])
def test_keys_that_say_the_same_thing_twice_are_refused(changes: dict[str, object],
                                                        message: str) -> None:
    with pytest.raises(AuditSpecError, match=message):
        parse_spec(with_audit(**changes))


def test_a_long_list_of_problems_is_one_a_line_and_capped() -> None:
    from fedsec.audit.spec import MAX_LISTED

    raw = {"audit": {"protocols": ["fedcg-naive"], "dataset": "iris"},
           "sweep": {"n_landmarks": {"start": 113, "stop": 312}},  # the training set has 112
           "attacks": [{"name": "multilateration", "as": "server"}]}
    with pytest.raises(AuditSpecError) as info:
        parse_spec(raw, source="wide.toml")
    assert len(info.value.problems) == 200  # every one is kept
    lines = str(info.value).splitlines()
    assert lines[0] == "wide.toml has 200 problem(s):"
    assert len(lines) == 1 + MAX_LISTED + 1
    assert all(line.startswith("  - ") for line in lines[1:-1])
    assert lines[-1].startswith(f"  ... and {200 - MAX_LISTED} more")
    assert len(str(info.value)) < 10_000  # 200 problems of about 200 characters each: 40 kB


def test_a_scorer_that_cannot_read_what_its_attack_recovers_is_refused() -> None:
    bad = {**GOOD, "attacks": [{"name": "contribution-readout", "as": ["aggregator"],
                                "scorer": "point-recovery"}]}
    with pytest.raises(AuditSpecError) as info:
        parse_spec(bad)
    assert len(info.value.problems) == 1
    problem = info.value.problems[0]
    assert "scorer 'point-recovery' cannot score what 'contribution-readout' recovers" in problem
    assert "use reconstruction-error (its default) or feature-recovery" in problem
    fitting = {**GOOD, "attacks": [{"name": "contribution-readout", "as": ["aggregator"],
                                    "scorer": "feature-recovery"}]}
    assert parse_spec(fitting).attacks[0].scorer == "feature-recovery"


def test_scorers_declare_what_they_read_and_a_plug_in_that_declares_nothing_passes() -> None:
    from fedsec import registry
    from fedsec.audit.checks import scorer_misfit
    from fedsec.interfaces import ESTIMATE_KINDS, Scorer

    for name in registry.names("scorer"):  # every built-in declares known kinds
        reads = registry.get("scorer", name).reads
        assert reads and reads <= set(ESTIMATE_KINDS), name
    for name in registry.names("attack"):  # and each attack fits its own default scorer
        cls = registry.get("attack", name)
        assert scorer_misfit(cls, registry.get("scorer", cls.default_scorer)) is None, name

    class Anything(Scorer):
        name = "anything"

        def score(self, reconstruction, truth):  # type: ignore[no-untyped-def]
            return {}

    assert scorer_misfit(registry.get("attack", "subspace-accumulation"), Anything) is None
