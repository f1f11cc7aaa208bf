"""Every refusal of apply() and of the Partition grid names the problem and the fix."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from fedsec.errors import PartitionError, UnknownNameError
from fedsec.partition import Partition, UnknownPartyError, parse_partition

ALL4 = {"all": range(4)}


def _apply(spec: Any, **kwargs: Any) -> Partition:
    arguments: dict[str, Any] = {
        "n_samples": 6,
        "feature_groups": ALL4,
        "rng": np.random.default_rng(0),
    }
    arguments.update(kwargs)
    return parse_partition(spec).apply(**arguments)


def _escape(text: str) -> str:
    return "".join("\\" + ch if ch in "()[]{}.*+?^$|" else ch for ch in text)


# --- too many parties for the rows and columns -----------------------------------------------


@pytest.mark.parametrize(
    ("spec", "kwargs", "fragments"),
    [
        ("vertical:parties=5", {}, ["5 parties", "has 4", "at most 4 parties"]),
        ("horizontal:parties=7", {}, ["7 parties", "at least 7 rows", "has 6"]),
        ("horizontal:parties=3,size=3", {}, ["3 parties × size=3", "9 rows", "has 6"]),
        ("hybrid:cohorts=7", {}, ["7 cohorts", "has 6", "at most 6 cohorts"]),
        ("hybrid:groups=5", {}, ["5 column groups", "only 4 columns"]),
        ({"kind": "hybrid", "owners": [["a"]] * 7}, {}, ["7 cohorts", "has 6"]),
    ],
)
def test_too_many_parties_names_both_numbers(
    spec: Any, kwargs: dict[str, Any], fragments: list[str]
) -> None:
    with pytest.raises(PartitionError) as info:
        _apply(spec, **kwargs)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_by_groups_with_a_count_mismatch_names_the_group_count_and_the_fix() -> None:
    with pytest.raises(PartitionError) as info:
        _apply("vertical:by=groups,parties=3", feature_groups={"a": [0, 1], "b": [2, 3]})
    message = str(info.value)
    assert "the dataset has 2 group(s) (a, b)" in message
    assert "3 parties" in message
    assert "Set parties=2, or by=even" in message


# --- by=site -------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["hybrid:by=site", "horizontal:by=site"])
def test_by_site_needs_site_ids(spec: str) -> None:
    with pytest.raises(
        PartitionError, match=_escape("pass cohorts=... to apply(), or use by=even")
    ):
        _apply(spec)


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("hybrid:by=site,cohorts=3", "'cohorts' is 3 but the dataset's site count is 2"),
        (
            "horizontal:by=site,parties=3",
            "number of parties is 3 but the dataset's site count is 2",
        ),
        ("horizontal:by=site,names=a+b+c", "number of parties is 3"),
        ({"kind": "hybrid", "by": "site", "owners": [["a"]]}, "row count is 1 but"),
        ("horizontal:by=site,size=4", "Site 0 has 3 rows, fewer than size=4"),
    ],
)
def test_site_counts_must_agree(spec: Any, fragment: str) -> None:
    with pytest.raises(PartitionError, match=_escape(fragment)):
        _apply(spec, cohorts=np.array([0, 0, 0, 1, 1, 1]))


# --- names: unknown, repeated, empty ---------------------------------------------------------


def test_unknown_label_holder_found_only_at_apply_lists_the_valid_parties() -> None:
    with pytest.raises(UnknownPartyError) as info:
        _apply("vertical:labels=party3", feature_groups={"a": [0, 1], "b": [2, 3]})
    assert isinstance(info.value, UnknownNameError)
    assert isinstance(info.value, KeyError)
    assert str(info.value) == (
        "Unknown party name(s) 'party3' in labels. Valid party names: party1, party2."
    )


def test_unknown_role_name_found_only_at_apply() -> None:
    with pytest.raises(
        UnknownPartyError, match=r"'x' in roles\. Valid party names: party1, party2"
    ):
        _apply("horizontal:by=site,roles=x:server", cohorts=np.array([0, 0, 0, 1, 1, 1]))


def test_unknown_hybrid_label_holder_at_apply() -> None:
    with pytest.raises(UnknownPartyError, match="'hospital3' in labels"):
        _apply("hybrid:labels=hospital1+hospital3")


def test_every_cohort_needs_a_label_holder_among_its_owners() -> None:
    spec = {"kind": "hybrid", "owners": [["h1", "c1"], ["h2", "c2"]], "labels": ["h1"]}
    with pytest.raises(PartitionError) as info:
        _apply(spec)
    message = str(info.value)
    assert "owns a cell of cohort 1" in message
    assert "Add one of its owners (h2, c2) to 'labels'" in message


@pytest.mark.parametrize(
    ("coordinators", "fragment"),
    [
        ([("party1", "server")], "Coordinator name(s) 'party1' are also data parties"),
        ([("server", "server"), ("server", "helper")], "repeated: 'server'"),
        ([("", "server")], "Coordinator name must be a non-empty string"),
        ([("server", "")], "Coordinator role must be a non-empty string"),
        ([("a+b", "server")], "reserved characters"),
        ([("server",)], "(name, role) pairs"),
        ("server", "(name, role) pairs"),
    ],
)
def test_coordinator_names_must_be_unique_and_valid(coordinators: Any, fragment: str) -> None:
    with pytest.raises(PartitionError, match=_escape(fragment)):
        _apply("horizontal:parties=2", coordinators=coordinators)


# --- what apply() is given -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"n_samples": 0}, "The 'n_samples' parameter of PartitionSpec.apply must be an int >= 1."),
        ({"n_samples": 6.0}, "Got 6.0 instead."),
        ({"rng": 0}, "The 'rng' parameter of PartitionSpec.apply must be a numpy.random.Generator"),
        ({"feature_groups": {}}, "'feature_groups' parameter"),
        ({"feature_groups": {"a": []}}, "Feature group 'a' has no columns"),
        (
            {"feature_groups": {"a": [0, 1], "b": [1]}},
            "Column 1 is in feature group 'a' and in 'b'",
        ),
        ({"feature_groups": {"a": [-1]}}, "non-negative integer column indices"),
        ({"feature_groups": {"a": [0.5]}}, "non-negative integer column indices"),
        ({"feature_groups": {"": [0]}}, "must be a non-empty string"),
        ({"y": np.zeros(5)}, "one-dimensional array of 6 class codes"),
        ({"y": np.linspace(0, 1, 6)}, "Pass y=None"),
        ({"cohorts": np.zeros(4)}, "one-dimensional array of 6 site ids"),
        ({"cohorts": np.array([0, 1, np.nan, 0, 1, 0])}, "without missing values"),
    ],
)
def test_apply_arguments_are_checked(kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(PartitionError, match=_escape(fragment)):
        _apply("horizontal:parties=2", **kwargs)


# --- the grid checks itself ------------------------------------------------------------------


def _paper() -> dict[str, Any]:
    spec = {
        "kind": "hybrid",
        "owners": [["hospital1", "centre1", "centre2"], ["hospital2", "centre3", "centre2"]],
    }
    part = _apply(
        spec,
        feature_groups={"a": [0], "b": [1, 2], "c": [3]},
        coordinators=[("server", "server")],
    )
    return part.to_dict()


def _refused(data: dict[str, Any], *fragments: str, error: type = PartitionError) -> str:
    with pytest.raises(error) as info:
        Partition.from_dict(data)
    for fragment in fragments:
        assert fragment in str(info.value)
    return str(info.value)


def test_a_valid_dictionary_is_accepted() -> None:
    assert Partition.from_dict(_paper()).parties[-1] == "server"


def test_every_cell_must_be_owned_by_a_party() -> None:
    data = _paper()
    data["cells"][1]["owner"] = "nobody"
    _refused(
        data, "'nobody' in the owner of cell (0, 1)", "Valid party names", error=UnknownPartyError
    )


def test_coordinators_own_no_cell() -> None:
    data = _paper()
    data["cells"][4]["owner"] = "server"
    _refused(data, "Coordinator 'server' owns cell (1, 1)", "Give the cell to a data party")


def test_every_data_party_owns_a_non_empty_cell() -> None:
    data = _paper()
    data["cells"][4]["rows"] = []  # centre3's only cell
    _refused(data, "Party 'centre3' owns no cell with both rows and columns")
    data = _paper()
    data["cells"][1]["columns"] = []  # centre1's only cell
    _refused(data, "Party 'centre1' owns no cell")


def test_a_party_without_cells_must_be_a_coordinator() -> None:
    data = _paper()
    data["parties"].insert(5, "idle")
    data["roles"]["idle"] = "centre"
    _refused(data, "Party 'idle' owns no cell", "make it a coordinator")


def test_label_holders_must_own_a_cell_of_their_cohort() -> None:
    data = _paper()
    data["label_owners"][0] = ["centre3"]
    _refused(data, "'centre3' hold(s) the labels of cohort 0", "among centre1, centre2, hospital1")
    data["label_owners"][0] = []
    _refused(data, "Nobody holds the labels of cohort 0")
    data["label_owners"][0] = ["ghost"]
    _refused(data, "'ghost' in the labels of cohort 0", error=UnknownPartyError)
    data["label_owners"] = [["hospital1"]]
    _refused(data, "every cohort 0..1")


def test_party_names_must_be_unique_and_non_empty() -> None:
    data = _paper()
    data["parties"][1] = "hospital1"
    _refused(data, "Party names must be unique; repeated: 'hospital1'")
    data = _paper()
    data["parties"][1] = ""
    _refused(data, "Party name must be a non-empty string")


def test_roles_must_cover_the_parties_exactly() -> None:
    data = _paper()
    del data["roles"]["centre1"]
    _refused(data, "Every party needs a role; none given for 'centre1'")
    data = _paper()
    data["roles"]["ghost"] = "centre"
    _refused(data, "'ghost' in roles", error=UnknownPartyError)


def test_grid_shape_and_indices_are_checked() -> None:
    data = _paper()
    data["cells"] = data["cells"][:-1]
    _refused(data, "exactly one cell per (cohort, group)")
    data = _paper()
    data["row_blocks"][1] = [*data["row_blocks"][1], data["row_blocks"][0][0]]
    _refused(data, "Row blocks overlap")
    data = _paper()
    data["cells"][0]["rows"] = [0, 99]
    _refused(data, "indexes rows outside 0..5")
    data = _paper()
    data["group_names"] = ["a"]
    _refused(data, "1 group names for 3 column groups")
    data = _paper()
    data["kind"] = "diagonal"
    _refused(data, "Unknown partition kind 'diagonal'")
    data = copy.deepcopy(_paper())
    del data["cells"]
    _refused(data, "Not a partition dictionary")


def test_cells_of_an_unknown_party() -> None:
    part = Partition.from_dict(_paper())
    with pytest.raises(UnknownPartyError, match="Valid party names: centre1, centre2, centre3"):
        part.cells_of("centre4")
    with pytest.raises(KeyError):
        part.shard("centre4", np.zeros((6, 4)))
