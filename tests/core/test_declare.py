"""Parameters validated from their declarations: checks, owners, describe, did-you-mean."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

from fedsec.cli.main import main
from fedsec.data import check_spec, load
from fedsec.declare import Bool, Choice, Declared, Float, Int, declared_constraints, owner_of
from fedsec.errors import UnknownNameError, ValidationError
from fedsec.interfaces import Defense
from fedsec.params import build_params


@dataclass(frozen=True, kw_only=True)
class Demo(Declared):
    rounds: Annotated[int, Int(min=1, max=8)] = 2
    rate: Annotated[float, Float(min=0.0, min_inclusive=False, max=0.5)] = 0.1
    rule: Annotated[str, Choice("mean", "median")] = "mean"
    exact: Annotated[bool, Bool()] = False
    limit: Annotated[float | None, Float(min=0.0)] = None
    label: str = "x"

    def __post_init__(self) -> None:
        if self.exact and self.rule == "median":
            raise ValidationError(f"{owner_of(self)}: exact needs rule='mean'.")


class DemoDefense(Defense):
    kind = "defense"
    name = "demo-defense"
    Params = Demo


def test_valid_values_pass() -> None:
    p = Demo(rounds=8, rate=0.5, rule="median", exact=False, limit=3.0)
    assert (p.rounds, p.rate, p.rule, p.limit) == (8, 0.5, "median", 3.0)
    assert Demo(limit=None).limit is None


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("rounds", 0, "an int in [1, 8]"),
    ("rounds", 9, "an int in [1, 8]"),
    ("rounds", 2.0, "an int in [1, 8]"),
    ("rounds", True, "an int in [1, 8]"),
    ("rate", 0.0, "a finite number > 0.0 and <= 0.5"),
    ("rate", 0.6, "a finite number > 0.0 and <= 0.5"),
    ("rate", float("nan"), "a finite number > 0.0 and <= 0.5"),
    ("rule", "mode", "one of 'mean', 'median'"),
    ("exact", 1, "a bool"),
    ("limit", -1.0, "a finite number >= 0.0"),
])
def test_each_invalid_value_names_the_registered_owner(name: str, value: Any,
                                                       expected: str) -> None:
    with pytest.raises(ValidationError) as info:
        DemoDefense(**{name: value})
    assert str(info.value) == (
        f"The {name!r} parameter of defense 'demo-defense' must be {expected}. "
        f"Got {value!r} instead.")


def test_built_directly_the_class_names_itself() -> None:
    with pytest.raises(ValidationError, match="'rounds' parameter of Demo must be an int"):
        Demo(rounds=0)


def test_the_hand_written_relation_still_runs_under_the_owner() -> None:
    with pytest.raises(ValidationError, match=r"^defense 'demo-defense': exact needs"):
        DemoDefense(exact=True, rule="median")
    with pytest.raises(ValidationError, match="'rounds' parameter"):  # declarations come first
        DemoDefense(exact=True, rule="median", rounds=0)


def test_strings_from_the_command_line_are_converted_then_checked() -> None:
    assert build_params(Demo, {"rounds": "3", "exact": "true"}, owner="o").rounds == 3
    with pytest.raises(ValidationError, match="'rounds' parameter of o must be an int in"):
        build_params(Demo, {"rounds": "12"}, owner="o")


def test_the_declarations_are_read_without_building() -> None:
    found = declared_constraints(Demo)
    assert sorted(found) == ["exact", "limit", "rate", "rounds", "rule"]
    assert found["limit"][1] and not found["rate"][1]
    assert found["rate"][0].text() == "(0, 0.5]"


def test_a_shared_params_class_names_the_component_in_use() -> None:
    from fedsec.registry import get

    with pytest.raises(ValidationError, match="of protocol 'fedcg-naive' must be an int >= 1"):
        get("protocol", "fedcg-naive")(n_landmarks=0)


def test_describe_json_lists_declared_constraints(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", "nri-dc", "--kind", "protocol", "--json"]) == 0
    params = {p["name"]: p for p in json.loads(capsys.readouterr().out)["params"]}
    assert params["rdp_weight"]["constraints"] == [
        {"kind": "number", "min": 0.0, "min_inclusive": False}]
    assert params["rdp_init"]["constraints"] == [{"kind": "choice", "choices": ["ls", "opp"]}]
    assert params["n_anchor"]["allowed"] == ">= 1"
    assert params["rescale"]["constraints"] == [{"kind": "bool"}]
    assert params["anchor_dataset"]["constraints"] == []  # any string


def test_a_misspelt_parameter_gets_its_close_match() -> None:
    with pytest.raises(ValidationError) as info:
        DemoDefense(round=3)
    assert str(info.value) == (
        "defense 'demo-defense' has no parameter 'round'. Did you mean 'rounds'? "
        "Valid parameters: exact, label, limit, rate, rounds, rule.")


def test_a_misspelt_dataset_or_option_gets_its_close_match() -> None:
    with pytest.raises(UnknownNameError, match=r"Unknown dataset 'irris'\. Did you mean 'iris'\?"):
        check_spec("irris")
    with pytest.raises(UnknownNameError, match="Did you mean 'pima'"):
        load("pimma")
    with pytest.raises(ValidationError, match="Did you mean 'target'"):
        load("heart", targt="num")


@dataclass(frozen=True, kw_only=True)
class Window(Declared):
    low: Annotated[int, Int(min=0)] = 0
    high: Annotated[int, Int(min=0)] = 1

    def __post_init__(self) -> None:
        if self.low >= self.high:
            raise ValidationError(f"{owner_of(self)}: low must be below high.")


@dataclass(frozen=True, kw_only=True)
class EvenWindow(Window):
    step: Annotated[int, Int(min=1)] = 1

    def __post_init__(self) -> None:
        if (self.high - self.low) % self.step:
            raise ValidationError(f"{owner_of(self)}: step must divide the window.")


def test_a_subclass_adds_its_relations_to_its_parents_and_keeps_theirs() -> None:
    assert EvenWindow(low=0, high=4, step=2).step == 2
    with pytest.raises(ValidationError, match="must be an int >= 1"):  # declared, checked first
        EvenWindow(low=0, high=4, step=0)
    with pytest.raises(ValidationError, match="low must be below high"):  # the parent's relation
        EvenWindow(low=3, high=3, step=1)
    with pytest.raises(ValidationError, match="step must divide"):  # its own
        EvenWindow(low=0, high=5, step=2)
    calls: list[str] = []

    @dataclass(frozen=True, kw_only=True)
    class Counted(EvenWindow):
        def __post_init__(self) -> None:
            calls.append("own")

    Counted(low=0, high=2)
    assert calls == ["own"]  # every hook once, even with three levels
