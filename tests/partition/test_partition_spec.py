"""Parsing partition specs: strings, TOML tables, canonical form and every refusal."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.errors import PartitionError, UnknownNameError
from fedsec.partition import PartitionSpec, UnknownPartyError, parse_partition

# --- strategies -----------------------------------------------------------------------------

NAME = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True)
ROLE = st.sampled_from(["client", "worker", "hospital", "centre", "active_worker"])
FRACTION = st.floats(min_value=0.0, max_value=1.0, exclude_max=True, allow_nan=False)


def _roles_for(draw: st.DrawFn, parties: list[str]) -> dict[str, str] | None:
    if not parties or not draw(st.booleans()):
        return None
    chosen = draw(st.lists(st.sampled_from(parties), min_size=1, unique=True))
    return {name: draw(ROLE) for name in chosen}


@st.composite
def horizontal_tables(draw: st.DrawFn) -> dict:
    table: dict = {"kind": "horizontal"}
    parties: list[str] = []
    if draw(st.booleans()):
        parties = draw(st.lists(NAME, min_size=1, max_size=5, unique=True))
        table["names"] = parties
    elif draw(st.booleans()):
        table["parties"] = draw(st.integers(1, 20))
        parties = [f"party{i}" for i in range(1, table["parties"] + 1)]
    if draw(st.booleans()):
        table["size"] = draw(st.integers(1, 100))
    if draw(st.booleans()):
        table["overlap"] = draw(FRACTION)
    if draw(st.booleans()):
        table["by"] = draw(st.sampled_from(["even", "site"]))
    roles = _roles_for(draw, parties)
    if roles:
        table["roles"] = roles
    return table


@st.composite
def vertical_tables(draw: st.DrawFn) -> dict:
    table: dict = {"kind": "vertical"}
    parties: list[str] = []
    if draw(st.booleans()):
        parties = draw(st.lists(NAME, min_size=1, max_size=5, unique=True))
        table["names"] = parties
    elif draw(st.booleans()):
        table["parties"] = draw(st.integers(1, 20))
        parties = [f"party{i}" for i in range(1, table["parties"] + 1)]
    if draw(st.booleans()):
        table["by"] = draw(st.sampled_from(["groups", "even"]))
    if draw(st.booleans()):
        table["overlap"] = draw(FRACTION)
    if parties and draw(st.booleans()):
        table["labels"] = draw(st.lists(st.sampled_from(parties), min_size=1, unique=True))
    roles = _roles_for(draw, parties)
    if roles:
        table["roles"] = roles
    return table


@st.composite
def hybrid_tables(draw: st.DrawFn) -> dict:
    table: dict = {"kind": "hybrid"}
    parties: list[str] = []
    if draw(st.booleans()):
        pool = draw(st.lists(NAME, min_size=1, max_size=6, unique=True))
        n_cohorts, n_groups = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        grid = [[draw(st.sampled_from(pool)) for _ in range(n_groups)] for _ in range(n_cohorts)]
        table["owners"] = grid
        parties = list(dict.fromkeys(name for row in grid for name in row))
    else:
        if draw(st.booleans()):
            table["cohorts"] = draw(st.integers(1, 5))
        if draw(st.booleans()):
            table["groups"] = draw(st.integers(1, 5))
        if draw(st.booleans()):
            table["centres"] = draw(st.sampled_from(["shared", "per-cohort"]))
    for key in ("overlap_rows", "overlap_features"):
        if draw(st.booleans()):
            table[key] = draw(FRACTION)
    if draw(st.booleans()):
        table["by"] = draw(st.sampled_from(["even", "site"]))
    if parties and draw(st.booleans()):
        table["labels"] = draw(st.lists(st.sampled_from(parties), min_size=1, unique=True))
    roles = _roles_for(draw, parties)
    if roles:
        table["roles"] = roles
    return table


TABLES = st.one_of(horizontal_tables(), vertical_tables(), hybrid_tables())


def _as_text(table: dict) -> str:
    """Write a table in the string form by hand (independently of the code under test)."""
    parts = []
    for key, value in table.items():
        if key == "kind":
            continue
        if key == "owners":
            text = "/".join("+".join(row) for row in value)
        elif key == "roles":
            text = "+".join(f"{name}:{role}" for name, role in value.items())
        elif isinstance(value, list):
            text = "+".join(value)
        else:
            text = str(value)
        parts.append(f"{key}={text}")
    return table["kind"] + (":" + ",".join(parts) if parts else "")


# --- round trips ----------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(TABLES)
def test_string_and_table_forms_agree_and_round_trip(table: dict) -> None:
    from_table = parse_partition(table)
    from_text = parse_partition(_as_text(table))
    assert from_table == from_text
    canonical = str(from_table)
    assert parse_partition(canonical) == from_table
    assert str(parse_partition(canonical)) == canonical
    as_json = json.loads(json.dumps(from_table.to_dict()))
    assert parse_partition(as_json) == from_table
    assert hash(parse_partition(as_json)) == hash(from_table)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("horizontal", "horizontal"),
        ("horizontal:", "horizontal"),
        (" Horizontal : parties = 13 , size = 50 ", "horizontal:parties=13,size=50"),
        ("horizontal:size=50,parties=13", "horizontal:parties=13,size=50"),
        ("horizontal:overlap=0.0,by=even", "horizontal"),
        ("vertical:parties=4", "vertical:parties=4"),
        ("vertical:labels=party1+party2", "vertical:labels=party1+party2"),
        ("vertical:names=a+b,parties=2", "vertical:names=a+b"),
        ("hybrid:cohorts=3,groups=3", "hybrid:cohorts=3,groups=3"),
        ("hybrid:centres=shared", "hybrid"),
        (
            "hybrid:overlap_rows=0.25,centres=per-cohort",
            "hybrid:centres=per-cohort,overlap_rows=0.25",
        ),
        ("hybrid:roles=b:x+a:y,owners=a+b", "hybrid:owners=a+b,roles=a:y+b:x"),
    ],
)
def test_canonical_string(text: str, canonical: str) -> None:
    assert str(parse_partition(text)) == canonical


def test_options_hold_every_key_with_defaults() -> None:
    spec = parse_partition("horizontal:parties=2")
    assert spec.kind == "horizontal"
    assert dict(spec.options) == {
        "parties": 2,
        "size": None,
        "overlap": 0.0,
        "by": "even",
        "names": None,
        "roles": None,
    }
    with pytest.raises(TypeError):
        spec.options["parties"] = 3  # type: ignore[index]


def test_paper_layout_as_a_toml_table() -> None:
    table = {
        "kind": "hybrid",
        "owners": [["hospital1", "centre1", "centre2"], ["hospital2", "centre3", "centre2"]],
        "labels": ["hospital1", "hospital2"],
        "roles": {"centre2": "centre"},
    }
    spec = parse_partition(table)
    assert spec.options["owners"] == (
        ("hospital1", "centre1", "centre2"),
        ("hospital2", "centre3", "centre2"),
    )
    assert spec.to_dict() == table
    assert str(spec) == (
        "hybrid:owners=hospital1+centre1+centre2/hospital2+centre3+centre2,"
        "labels=hospital1+hospital2,roles=centre2:centre"
    )


def test_comma_separated_lists_in_a_table() -> None:
    spec = parse_partition({"kind": "vertical", "names": "a, b", "labels": "a,b"})
    assert spec.options["names"] == ("a", "b")
    assert spec.options["labels"] == ("a", "b")


def test_spec_objects_pass_through_and_can_be_built_directly() -> None:
    spec = PartitionSpec("vertical", {"parties": 3})
    assert parse_partition(spec) is spec
    assert spec == parse_partition("vertical:parties=3")


# --- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["grid", "grid:parties=2", {"kind": "diagonal"}, {"kind": 3}])
def test_unknown_kind_lists_the_valid_ones(spec: object) -> None:
    with pytest.raises(
        PartitionError, match=r"Unknown partition kind .*horizontal, vertical, hybrid"
    ):
        parse_partition(spec)  # type: ignore[arg-type]


def test_unknown_option_lists_the_valid_ones() -> None:
    with pytest.raises(PartitionError) as info:
        parse_partition("hybrid:cohort=2")
    message = str(info.value)
    assert "'cohort'" in message
    assert "Valid options: cohorts, groups, centres" in message


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            "horizontal:parties=0",
            "The 'parties' parameter of partition 'horizontal' must be an int >= 1. Got 0 instead.",
        ),
        ("horizontal:parties=abc", "must be an int >= 1. Got 'abc' instead."),
        ("horizontal:parties=", "must be an int >= 1. Got '' instead."),
        (
            "horizontal:size=2.5",
            "The 'size' parameter of partition 'horizontal' must be an int >= 1. "
            "Got '2.5' instead.",
        ),
        ("horizontal:overlap=1", "must be a finite number >= 0.0 and < 1.0. Got 1.0 instead."),
        ("horizontal:overlap=-0.1", "Got -0.1 instead."),
        ("horizontal:overlap=nan", "must be a finite number"),
        (
            "horizontal:by=random",
            "The 'by' parameter of partition 'horizontal' must be one of 'even', 'site'.",
        ),
        ("vertical:by=site", "must be one of 'groups', 'even'. Got 'site' instead."),
        ("hybrid:centres=each", "must be one of 'shared', 'per-cohort'. Got 'each' instead."),
        ({"kind": "vertical", "parties": 2.0}, "must be an int >= 1. Got 2.0 instead."),
        ({"kind": "vertical", "parties": True}, "must be an int >= 1. Got True instead."),
        ({"kind": "hybrid", "overlap_rows": "0.5"}, "Got '0.5' instead."),
    ],
)
def test_bad_values_use_the_standard_message(spec: object, expected: str) -> None:
    with pytest.raises(PartitionError) as info:
        parse_partition(spec)  # type: ignore[arg-type]
    assert expected in str(info.value)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("vertical:names=a+a", "repeated name(s) 'a'"),
        ("vertical:names=a+", "party name must be a non-empty string"),
        ({"kind": "vertical", "names": ["a", ""]}, "party name must be a non-empty string"),
        ({"kind": "vertical", "names": ["a", " b"]}, "starts or ends with whitespace"),
        ({"kind": "vertical", "names": ["a/b"]}, "reserved characters"),
        ({"kind": "vertical", "names": []}, "a non-empty list of distinct party names"),
        ({"kind": "vertical", "labels": [1]}, "party name 1 is not a string"),
        ({"kind": "hybrid", "owners": [["a", "b"], ["c"]]}, "rows have different lengths"),
        ({"kind": "hybrid", "owners": [["a", ""]]}, "owner of cell (0, 1) must be a non-empty"),
        ({"kind": "hybrid", "owners": [[]]}, "row 0 is not a non-empty list"),
        ({"kind": "hybrid", "owners": "a+b/c+"}, "owner of cell (1, 1)"),
        ({"kind": "hybrid", "owners": ["ab"]}, "row 0 is not a non-empty list"),
        ("hybrid:roles=a", "'a' is not of the form name:role"),
        ({"kind": "hybrid", "roles": {"a": ""}}, "role must be a non-empty string"),
        ({"kind": "hybrid", "roles": ["a"]}, "a mapping from party name to role"),
    ],
)
def test_bad_names_say_what_is_wrong(spec: object, expected: str) -> None:
    with pytest.raises(PartitionError) as info:
        parse_partition(spec)  # type: ignore[arg-type]
    assert expected in str(info.value)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("horizontal:parties=2,names=a+b+c", "'names' lists 3 parties but 'parties' is 2"),
        (
            {"kind": "hybrid", "owners": [["a", "b"]], "cohorts": 2},
            "'owners' has 1 rows but 'cohorts' is 2",
        ),
        (
            {"kind": "hybrid", "owners": [["a", "b"]], "groups": 3},
            "'owners' has 2 columns but 'groups' is 3",
        ),
        ({"kind": "hybrid", "owners": [["a"]], "centres": "per-cohort"}, "Give only one of them"),
    ],
)
def test_contradicting_options_are_refused(spec: object, expected: str) -> None:
    with pytest.raises(PartitionError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        parse_partition(spec)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("spec", "where", "unknown", "valid"),
    [
        ("vertical:names=a+b,labels=c", "labels", "'c'", "a, b"),
        ("vertical:parties=2,roles=party3:worker", "roles", "'party3'", "party1, party2"),
        ("horizontal:roles=party4:client", "roles", "'party4'", "party1, party2, party3"),
        (
            {"kind": "hybrid", "owners": [["h", "c"]], "labels": ["x", "y"]},
            "labels",
            "'x', 'y'",
            "c, h",
        ),
        ("hybrid:cohorts=1,groups=2,labels=centre9", "labels", "'centre9'", "centre1, hospital1"),
    ],
)
def test_unknown_party_names_are_listed_with_the_valid_ones(
    spec: object, where: str, unknown: str, valid: str
) -> None:
    with pytest.raises(UnknownPartyError) as info:
        parse_partition(spec)  # type: ignore[arg-type]
    assert isinstance(info.value, UnknownNameError)
    assert (
        str(info.value)
        == f"Unknown party name(s) {unknown} in {where}. Valid party names: {valid}."
    )


def test_a_table_reports_every_problem_at_once() -> None:
    table = {
        "kind": "hybrid",
        "cohort": 2,
        "groups": 0,
        "centres": "each",
        "overlap_rows": 2.0,
        "labels": ["a", "a"],
    }
    with pytest.raises(PartitionError) as info:
        parse_partition(table)
    message = str(info.value)
    assert message.startswith("The partition 'hybrid' spec has 5 problems:")
    for fragment in ("'cohort'", "'groups'", "'centres'", "'overlap_rows'", "repeated name(s) 'a'"):
        assert fragment in message


def test_value_problems_and_unknown_names_are_reported_together() -> None:
    with pytest.raises(PartitionError) as info:
        parse_partition({"kind": "vertical", "names": ["a", "b"], "overlap": 3, "labels": ["z"]})
    message = str(info.value)
    assert "2 problems" in message
    assert "'overlap'" in message
    assert "Unknown party name(s) 'z' in labels" in message


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("horizontal:parties", "Option 'parties' is not of the form key=value."),
        ("horizontal:parties=2,", "Option '' is not of the form key=value."),
        ("horizontal:=2", "is not of the form key=value"),
        ("horizontal:parties=2,parties=3", "Option 'parties' is given twice."),
    ],
)
def test_malformed_strings(spec: str, expected: str) -> None:
    with pytest.raises(PartitionError, match=expected):
        parse_partition(spec)


@pytest.mark.parametrize("spec", [{"parties": 2}, 3, None, ["horizontal"]])
def test_not_a_spec(spec: object) -> None:
    with pytest.raises(PartitionError, match="kind"):
        parse_partition(spec)  # type: ignore[arg-type]
