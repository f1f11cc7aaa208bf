"""``fedsec.describe``: every built-in parameter documented, ranges as enforced, plug-ins too."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pytest

from fedsec import registry
from fedsec.describe import (
    NO_DESCRIPTION,
    describe_component,
    describe_params,
    field_docs,
    find_component,
)
from fedsec.errors import UnknownNameError, ValidationError
from fedsec.interfaces import Defense
from fedsec.scoring.epsilon_dr import EpsilonDR
from fedsec.scoring.rows import RowsParams
from fedsec.validation import Constraint, check_float, check_int, recording_constraints

BUILT_INS = [(kind, name, cls) for kind in registry.KINDS
             for name, cls in registry.classes(kind).items()
             if cls.__module__.startswith("fedsec.")]


def _ids(items: list[tuple[str, str, type]]) -> list[str]:
    return [f"{kind}:{name}" for kind, name, _ in items]


@pytest.mark.parametrize(("kind", "name", "cls"), BUILT_INS, ids=_ids(BUILT_INS))
def test_every_built_in_parameter_has_a_one_line_meaning(kind: str, name: str, cls: type) -> None:
    info = describe_component(kind, cls)
    undocumented = [p.name for p in info.params if p.meaning == NO_DESCRIPTION]
    assert not undocumented, (
        f"{kind} {name!r}: give each of {undocumented} a docstring on the line after the field")
    for p in info.params:
        assert p.type and p.meaning.endswith((".", ")")), (kind, name, p.name, p.meaning)


def _outside(constraint: Constraint, type_name: str) -> list[Any]:
    """Values just outside what ``constraint`` allows."""
    if constraint.kind == "choice":
        return ["surely-not-a-choice"]
    step: float = 1 if type_name == "int" else 1e-6
    out: list[Any] = []
    if constraint.min_value is not None:
        low = constraint.min_value
        out.append(low if not constraint.min_inclusive else low - step)
    if constraint.max_value is not None:
        out.append(constraint.max_value + step)
    return out


@pytest.mark.parametrize(("kind", "name", "cls"), BUILT_INS, ids=_ids(BUILT_INS))
def test_the_recorded_range_is_the_enforced_one(kind: str, name: str, cls: type) -> None:
    params, refused = describe_params(cls.Params)
    if refused:  # needs a value the defaults lack: nothing to build around
        return
    for p in params:
        for constraint in p.constraints:
            for value in _outside(constraint, p.type):
                with pytest.raises(ValidationError, match=p.name):
                    cls.Params(**{p.name: value})


def test_fedcg_shows_type_default_range_and_meaning() -> None:
    kind, cls = find_component("fedcg-naive")
    by_name = {p.name: p for p in describe_component(kind, cls).params}
    n_landmarks = by_name["n_landmarks"]
    assert (kind, n_landmarks.type, n_landmarks.default, n_landmarks.allowed) == (
        "protocol", "int", 50, ">= 1")
    assert by_name["regularization"].allowed == "> 0"
    assert by_name["landmark_method"].allowed == "one of 'P', 'U', 'N'"
    assert "Nyström landmarks" in n_landmarks.meaning
    assert by_name["server_knows_seed"].allowed == "true or false"


def test_an_undocumented_plug_in_is_described_from_its_dataclass() -> None:
    class Plug(Defense):
        summary = "A plug-in."

        @dataclass(frozen=True, kw_only=True)
        class Params:
            level: int = 2
            label: str = "x"
            """What the plug-in calls itself."""
            weights: tuple[float, ...] = dataclasses.field(default_factory=lambda: (1.0, 2.0))

            def __post_init__(self) -> None:
                check_int(self.level, owner="defense 'plug'", name="level", min_value=1,
                          max_value=3)

    info = describe_component("defense", Plug)
    level, label, weights = info.params
    assert (level.allowed, level.meaning) == ("[1, 3]", NO_DESCRIPTION)
    assert label.meaning == "What the plug-in calls itself."
    assert (weights.type, weights.default, weights.required) == ("tuple[float, ...]", (1.0, 2.0),
                                                                 False)
    assert info.summary == "A plug-in." and info.defaults_refused == ""


def test_required_fields_and_refused_defaults_are_marked_required() -> None:
    @dataclass(frozen=True, kw_only=True)
    class Needs:
        path: str
        """Where the data is."""
        rate: float = 0.5

    path, rate = describe_params(Needs)[0]
    assert (path.required, path.default, rate.required) == (True, None, False)
    _, cls = find_component("known-record-alignment")
    (records,), refused = describe_params(cls.Params)
    assert records.required and "records=PATH" in refused


def test_docstrings_are_inherited_and_overridden() -> None:
    assert "recovered" in field_docs(RowsParams)["epsilon"]
    assert field_docs(EpsilonDR.Params)["epsilon"].startswith("epsilon-DR threshold")


def test_checks_record_only_while_describing() -> None:
    with recording_constraints() as seen:
        check_float(0.5, owner="demo", name="rate", min_value=0.0, min_inclusive=False,
                    max_value=1.0)
        with pytest.raises(ValidationError):
            check_int(0, owner="demo", name="n", min_value=1)
    assert [c.text() for c in seen["rate"]] == ["(0, 1]"]
    assert seen["n"] == [Constraint("int", min_value=1)]
    assert seen["rate"][0].as_dict() == {"kind": "number", "min": 0.0, "min_inclusive": False,
                                         "max": 1.0, "max_inclusive": True}
    check_int(5, owner="demo", name="outside", min_value=1)
    assert "outside" not in seen


def test_names_are_found_across_kinds_or_refused_with_close_matches() -> None:
    assert find_component("paillier") == ("backend", registry.get("backend", "paillier"))
    assert find_component("binary-columns", "scorer")[0] == "scorer"
    with pytest.raises(ValidationError, match="--kind attack or --kind scorer"):
        find_component("binary-columns")
    with pytest.raises(UnknownNameError, match="Did you mean 'gaussian-noise'"):
        find_component("gausian-noise")
    with pytest.raises(ValidationError, match="is a dataset"):
        find_component("iris")
    path = "fedsec.defenses.gaussian_noise:GaussianNoise"
    assert find_component(path) == ("defense", registry.get("defense", "gaussian-noise"))
