"""Laying partitions out on a dataset's shape: coverage, overlap, stratification, sites."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.partition import Partition, parse_partition
from fedsec.partition.splits import shared_count


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _counts(part: Partition, n_samples: int, n_features: int) -> np.ndarray:
    """How many cells hold each (row, column) of the dataset."""
    counts = np.zeros((n_samples, n_features), dtype=int)
    for cell in part.cells:
        np.add.at(counts, np.ix_(cell.rows, cell.columns), 1)
    return counts


def _assigned(part: Partition) -> np.ndarray:
    return np.concatenate(part.row_blocks)


def _groups(sizes: list[int]) -> dict[str, range]:
    bounds = np.cumsum([0, *sizes])
    return {f"view{i}": range(bounds[i], bounds[i + 1]) for i in range(len(sizes))}


# --- each kind on a small shape --------------------------------------------------------------


def test_horizontal_defaults_split_rows_evenly_among_three_clients() -> None:
    part = parse_partition("horizontal").apply(
        n_samples=10, feature_groups={"all": range(4)}, rng=_rng()
    )
    assert part.kind == "horizontal"
    assert part.parties == ("party1", "party2", "party3")
    assert set(part.roles.values()) == {"client"}
    assert [len(b) for b in part.row_blocks] == [4, 3, 3]
    assert part.group_names == ("all",)
    assert [c.owner for c in part.cells] == list(part.parties)
    assert dict(part.label_owners) == {0: ("party1",), 1: ("party2",), 2: ("party3",)}
    counts = _counts(part, 10, 4)
    assert (counts == 1).all()


def test_horizontal_with_views_keeps_every_column_and_says_so() -> None:
    part = parse_partition("horizontal:parties=2").apply(
        n_samples=6, feature_groups=_groups([2, 3]), rng=_rng()
    )
    assert part.group_names == ("all",)
    assert part.column_groups[0].tolist() == [0, 1, 2, 3, 4]
    assert any("view0, view1" in note for note in part.describe()["notes"])


def test_horizontal_names_and_roles() -> None:
    part = parse_partition("horizontal:names=alice+bob,roles=bob:worker").apply(
        n_samples=4, feature_groups={"all": range(2)}, rng=_rng()
    )
    assert part.parties == ("alice", "bob")
    assert dict(part.roles) == {"alice": "client", "bob": "worker"}


def test_vertical_uses_the_dataset_groups_when_counts_match() -> None:
    part = parse_partition("vertical").apply(
        n_samples=5, feature_groups={"clin": [0, 1], "rna": [2, 3, 4]}, rng=_rng()
    )
    assert part.parties == ("party1", "party2")
    assert part.group_names == ("clin", "rna")
    assert [c.columns.tolist() for c in part.cells] == [[0, 1], [2, 3, 4]]
    assert [c.rows.tolist() for c in part.cells] == [list(range(5))] * 2
    assert dict(part.label_owners) == {0: ("party1",)}
    assert set(part.roles.values()) == {"worker"}


def test_vertical_even_split_of_an_ungrouped_dataset() -> None:
    part = parse_partition("vertical:parties=4,labels=party2+party4").apply(
        n_samples=3, feature_groups={"all": range(10)}, rng=_rng()
    )
    assert [len(g) for g in part.column_groups] == [3, 3, 2, 2]
    assert part.group_names == ("group1", "group2", "group3", "group4")
    assert part.label_owners[0] == ("party2", "party4")
    assert part.notes


def test_vertical_default_is_two_parties_without_groups() -> None:
    part = parse_partition("vertical").apply(
        n_samples=3, feature_groups={"all": range(5)}, rng=_rng()
    )
    assert part.parties == ("party1", "party2")
    assert [len(g) for g in part.column_groups] == [3, 2]


def test_hybrid_shared_centres() -> None:
    part = parse_partition("hybrid:cohorts=3,groups=3").apply(
        n_samples=12,
        feature_groups={"all": range(7)},
        rng=_rng(),
        coordinators=[("server", "server")],
    )
    assert part.parties == ("hospital1", "centre1", "centre2", "hospital2", "hospital3", "server")
    assert part.coordinators == ("server",)
    assert part.roles["server"] == "server"
    assert part.roles["hospital2"] == "hospital"
    assert part.roles["centre1"] == "centre"
    assert [len(b) for b in part.row_blocks] == [4, 4, 4]
    assert [len(g) for g in part.column_groups] == [3, 2, 2]
    assert [c.owner for c in part.cells_of("centre2")] == ["centre2"] * 3
    assert dict(part.label_owners) == {0: ("hospital1",), 1: ("hospital2",), 2: ("hospital3",)}
    assert part.cells_of("server") == ()
    assert any("contiguous" in note for note in part.notes)


def test_hybrid_per_cohort_centres() -> None:
    part = parse_partition("hybrid:centres=per-cohort").apply(
        n_samples=8, feature_groups=_groups([2, 2, 2]), rng=_rng()
    )
    assert part.parties == (
        "hospital1",
        "centre1_1",
        "centre1_2",
        "hospital2",
        "centre2_1",
        "centre2_2",
    )
    assert part.group_names == ("view0", "view1", "view2")
    assert part.notes == ()


def test_hybrid_defaults_follow_the_dataset_groups() -> None:
    part = parse_partition("hybrid").apply(
        n_samples=6, feature_groups=_groups([1, 2, 3, 1]), rng=_rng()
    )
    assert part.n_cohorts == 2
    assert part.n_groups == 4


def test_paper_example_two_hospitals_three_centres_one_serving_both() -> None:
    table = {
        "kind": "hybrid",
        "owners": [["hospital1", "centre1", "centre2"], ["hospital2", "centre3", "centre2"]],
        "labels": ["hospital1", "hospital2"],
    }
    groups = {"clinical": [0, 1], "genomics": [2, 3, 4], "proteomics": [5, 6]}
    X = np.arange(10 * 7, dtype=float).reshape(10, 7)
    y = np.array([0, 1] * 5)
    part = parse_partition(table).apply(
        n_samples=10, feature_groups=groups, y=y, rng=_rng(), coordinators=[("server", "server")]
    )
    assert part.parties == ("hospital1", "centre1", "centre2", "hospital2", "centre3", "server")
    assert dict(part.roles) == {
        "hospital1": "hospital",
        "centre1": "centre",
        "centre2": "centre",
        "hospital2": "hospital",
        "centre3": "centre",
        "server": "server",
    }
    assert [(c.cohort, c.group) for c in part.cells_of("centre2")] == [(0, 2), (1, 2)]
    assert dict(part.label_owners) == {0: ("hospital1",), 1: ("hospital2",)}
    assert part.group_names == ("clinical", "genomics", "proteomics")
    hospital = part.shard("hospital1", X, y)
    assert hospital.X.shape == (5, 2)
    assert np.array_equal(hospital.y, y[part.row_blocks[0]])
    centre = part.shard("centre2", X, y)
    assert [cell.y for cell in centre.cells] == [None, None]
    assert centre.n_rows == 10
    summary = json.loads(json.dumps(part.describe()))
    assert [p["name"] for p in summary["parties"]][-1] == "server"
    assert summary["cohorts"][1]["owners"] == ["hospital2", "centre3", "centre2"]


def test_hybrid_labels_may_include_a_shared_centre() -> None:
    part = parse_partition(
        {"kind": "hybrid", "owners": [["h1", "c"], ["h2", "c"]], "labels": ["c", "h2"]}
    ).apply(n_samples=4, feature_groups={"a": [0], "b": [1]}, rng=_rng())
    assert dict(part.label_owners) == {0: ("c",), 1: ("c", "h2")}


# --- by=site ---------------------------------------------------------------------------------


def test_sites_become_cohorts_and_parties() -> None:
    sites = np.array(["b", "a", "b", "c", "a", "b"])
    hybrid = parse_partition("hybrid:by=site,groups=2").apply(
        n_samples=6, feature_groups={"all": range(4)}, cohorts=sites, rng=_rng()
    )
    assert [b.tolist() for b in hybrid.row_blocks] == [[1, 4], [0, 2, 5], [3]]
    assert hybrid.sites == ("a", "b", "c")
    assert hybrid.describe()["cohorts"][2]["site"] == "c"
    horizontal = parse_partition("horizontal:by=site").apply(
        n_samples=6, feature_groups={"all": range(4)}, cohorts=sites, rng=_rng()
    )
    assert horizontal.parties == ("party1", "party2", "party3")
    assert [b.tolist() for b in horizontal.row_blocks] == [[1, 4], [0, 2, 5], [3]]


def test_sites_with_a_fixed_size_sample_within_each_site() -> None:
    sites = np.repeat([0, 1], [10, 6])
    part = parse_partition("horizontal:by=site,size=4").apply(
        n_samples=16, feature_groups={"all": range(2)}, cohorts=sites, rng=_rng()
    )
    assert [len(b) for b in part.row_blocks] == [4, 4]
    assert set(part.row_blocks[0]) <= set(range(10))
    assert set(part.row_blocks[1]) <= set(range(10, 16))


# --- coverage and overlap (properties) -------------------------------------------------------


@st.composite
def shapes_and_specs(draw: st.DrawFn) -> tuple[str, int, list[int]]:
    n_samples = draw(st.integers(1, 30))
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    n_features = sum(sizes)
    kind = draw(st.sampled_from(["horizontal", "vertical", "hybrid"]))
    fraction = draw(st.sampled_from([0.0, 0.0, 0.25, 0.5, 0.9]))
    if kind == "horizontal":
        parties = draw(st.integers(1, n_samples))
        options = [f"parties={parties}", f"overlap={fraction}"]
        if draw(st.booleans()):
            options.append(f"size={draw(st.integers(1, n_samples // parties))}")
    elif kind == "vertical":
        options = [f"parties={draw(st.integers(1, n_features))}", "by=even", f"overlap={fraction}"]
    else:
        fraction2 = draw(st.sampled_from([0.0, 0.3, 0.5]))
        options = [
            f"cohorts={draw(st.integers(1, min(n_samples, 4)))}",
            f"groups={draw(st.integers(1, min(n_features, 4)))}",
            f"centres={draw(st.sampled_from(['shared', 'per-cohort']))}",
            f"overlap_rows={fraction}",
            f"overlap_features={fraction2}",
        ]
    return f"{kind}:{','.join(options)}", n_samples, sizes


@settings(max_examples=120, deadline=None)
@given(shapes_and_specs(), st.integers(0, 2**32 - 1), st.booleans())
def test_cells_cover_the_grid_and_overlap_adds_the_right_count(
    case: tuple[str, int, list[int]], seed: int, stratify: bool
) -> None:
    text, n_samples, sizes = case
    n_features = sum(sizes)
    y = np.arange(n_samples) % 3 if stratify else None
    part = parse_partition(text).apply(
        n_samples=n_samples, feature_groups=_groups(sizes), y=y, rng=_rng(seed)
    )
    assigned = _assigned(part)
    assert len(np.unique(assigned)) == len(assigned)  # row blocks are disjoint
    columns = np.concatenate(part.column_groups)
    assert sorted(columns.tolist()) == list(range(n_features))  # groups tile the columns
    counts = _counts(part, n_samples, n_features)
    unassigned = np.setdiff1d(np.arange(n_samples), assigned)
    assert (counts[unassigned] == 0).all()
    assert (counts[assigned] >= 1).all()
    # Own cells tile assigned rows × all columns exactly once.
    own = np.zeros_like(counts)
    for cell in part.cells:
        block, group = part.row_blocks[cell.cohort], part.column_groups[cell.group]
        assert np.array_equal(cell.rows[: len(block)], block)
        assert np.array_equal(cell.columns[: len(group)], group)
        np.add.at(own, np.ix_(block, group), 1)
    assert (own[assigned] == 1).all()
    # Overlap: each cell gains ⌊f·n⌋ of the previous cohort's rows and group's columns.
    h_prev = [part.row_blocks[h - 1] for h in range(part.n_cohorts)]
    g_prev = [part.column_groups[g - 1] for g in range(part.n_groups)]
    for cell in part.cells:
        extra_rows = len(cell.rows) - len(part.row_blocks[cell.cohort])
        extra_columns = len(cell.columns) - len(part.column_groups[cell.group])
        want_rows = shared_count(part.row_overlap, len(h_prev[cell.cohort]))
        want_columns = shared_count(part.feature_overlap, len(g_prev[cell.group]))
        assert extra_rows == (want_rows if part.n_cohorts > 1 else 0)
        assert extra_columns == (want_columns if part.n_groups > 1 else 0)
        shared = cell.rows[len(part.row_blocks[cell.cohort]) :]
        assert set(shared.tolist()) <= set(h_prev[cell.cohort].tolist())
        assert len(set(cell.rows.tolist())) == len(cell.rows)
        assert len(set(cell.columns.tolist())) == len(cell.columns)
    # Every data party owns a non-empty cell; coordinators none.
    for party in part.data_parties:
        assert any(not c.is_empty for c in part.cells_of(party))
    if all(f == 0.0 for f in (part.row_overlap, part.feature_overlap)):
        assert (counts[assigned] == 1).all()


def test_overlap_counts_on_a_concrete_example() -> None:
    part = parse_partition("hybrid:cohorts=2,groups=2,overlap_rows=0.5,overlap_features=0.5").apply(
        n_samples=10, feature_groups={"all": range(8)}, rng=_rng()
    )
    # Cohorts of 5 rows share ⌊2.5⌋ = 2 rows; groups of 4 columns share 2 columns.
    assert [len(c.rows) for c in part.cells] == [7, 7, 7, 7]
    assert [c.columns.tolist() for c in part.cells[:2]] == [[0, 1, 2, 3, 6, 7], [4, 5, 6, 7, 2, 3]]
    assert part.describe()["overlap"] == {
        "rows": 0.5,
        "features": 0.5,
        "shared_rows": 4,
        "shared_columns": 4,
    }


def test_vertical_feature_overlap_gives_the_next_party_the_boundary_columns() -> None:
    part = parse_partition("vertical:parties=3,overlap=0.5").apply(
        n_samples=2, feature_groups={"all": range(6)}, rng=_rng()
    )
    assert [c.columns.tolist() for c in part.cells] == [[0, 1, 5], [2, 3, 1], [4, 5, 3]]


# --- stratification --------------------------------------------------------------------------


def test_fixed_size_horizontal_split_is_stratified() -> None:
    y = np.repeat([0, 1, 2], [120, 60, 20])
    np.random.default_rng(5).shuffle(y)
    part = parse_partition("horizontal:parties=4,size=20").apply(
        n_samples=200, feature_groups={"all": range(3)}, y=y, rng=_rng(1)
    )
    assert [len(b) for b in part.row_blocks] == [20] * 4
    assert len(np.unique(_assigned(part))) == 80
    for block in part.row_blocks:
        assert np.bincount(y[block], minlength=3).tolist() == [12, 6, 2]
    assert "stratified" in part.notes[0]


def test_even_horizontal_split_is_stratified() -> None:
    y = np.repeat([0, 1], [30, 9])
    part = parse_partition("horizontal:parties=3").apply(
        n_samples=39, feature_groups={"all": range(3)}, y=y, rng=_rng(2)
    )
    per_class = np.array([np.bincount(y[b], minlength=2) for b in part.row_blocks])
    assert (per_class.max(axis=0) - per_class.min(axis=0) <= 1).all()
    assert per_class.sum() == 39


def test_fixed_size_without_labels_samples_without_replacement() -> None:
    part = parse_partition("horizontal:parties=13,size=5").apply(
        n_samples=70, feature_groups={"all": range(3)}, rng=_rng(3)
    )
    rows = _assigned(part)
    assert len(rows) == 65 == len(np.unique(rows))
    assert part.describe()["n_rows_assigned"] == 65


# --- determinism and serialisation -----------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        "horizontal:parties=3,size=4,overlap=0.5",
        "vertical:parties=3,overlap=0.4",
        "hybrid:cohorts=3,groups=3,overlap_rows=0.3,overlap_features=0.3",
    ],
)
def test_same_rng_state_gives_the_same_partition(spec: str) -> None:
    y = np.arange(30) % 2

    def make(seed: int) -> Partition:
        return parse_partition(spec).apply(
            n_samples=30, feature_groups={"all": range(9)}, y=y, rng=_rng(seed)
        )

    assert make(7) == make(7)
    assert make(7).to_dict() == make(7).to_dict()
    if not spec.startswith("vertical"):
        assert make(7) != make(8)


def test_to_dict_round_trips_through_json() -> None:
    part = parse_partition("hybrid:cohorts=2,overlap_rows=0.5").apply(
        n_samples=9,
        feature_groups=_groups([2, 2, 2]),
        cohorts=None,
        rng=_rng(),
        coordinators=[("server", "server")],
    )
    again = Partition.from_dict(json.loads(json.dumps(part.to_dict())))
    assert again == part
    assert again.describe() == part.describe()


def test_index_arrays_are_read_only() -> None:
    part = parse_partition("vertical").apply(
        n_samples=3, feature_groups={"all": range(4)}, rng=_rng()
    )
    with pytest.raises(ValueError, match="read-only"):
        part.cells[0].rows[0] = 2
    with pytest.raises(ValueError, match="read-only"):
        part.row_blocks[0][0] = 2


# --- random: shares drawn per party (Hybrid FedGraph) ----------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 40), st.integers(1, 30), st.integers(1, 8),
    st.sampled_from([0.01, 0.1, 0.5, 1.0]), st.sampled_from([0.2, 0.7, 1.0]),
    st.integers(0, 2**32 - 1),
)
def test_random_parties_hold_their_shares_of_rows_and_columns(
    n_samples: int, n_features: int, parties: int, features: float, samples: float, seed: int
) -> None:
    text = f"random:parties={parties},features={features},samples={samples}"
    part = parse_partition(text).apply(
        n_samples=n_samples, feature_groups={"all": range(n_features)}, rng=_rng(seed),
        coordinators=[("server", "server")])
    want_columns = min(n_features, max(1, round(features * n_features)))
    want_rows = min(n_samples, max(1, round(samples * n_samples)))
    X = np.arange(n_samples * n_features, dtype=float).reshape(n_samples, n_features)
    y = np.arange(n_samples) % 3
    first_held: set[int] = set()
    for g, name in enumerate(part.data_parties):
        (cell,) = part.cells_of(name)
        assert len(cell.columns) == want_columns and len(set(cell.columns.tolist())) == want_columns
        assert len(cell.rows) == want_rows and np.all(np.diff(cell.rows) > 0)
        # A party's group is what it is the first to hold.
        assert set(part.column_groups[g].tolist()) == set(cell.columns.tolist()) - first_held
        first_held |= set(cell.columns.tolist())
        shard = part.shard(name, X, y)
        assert np.array_equal(shard.X, X[np.ix_(cell.rows, cell.columns)])
        assert np.array_equal(shard.y, y[cell.rows])  # every client holds its rows' labels
    assert part.describe()["n_features"] == len(first_held)
    assert Partition.from_dict(json.loads(json.dumps(part.to_dict()))) == part


def test_random_partition_refuses_a_share_outside_0_1_and_names_that_do_not_match() -> None:
    from fedsec.errors import PartitionError, ValidationError

    with pytest.raises(ValidationError, match="features"):
        parse_partition("random:features=0")
    with pytest.raises(ValidationError, match="samples"):
        parse_partition("random:samples=1.5")
    with pytest.raises(PartitionError, match="lists 2 parties"):
        parse_partition("random:parties=3,names=a+b").apply(
            n_samples=5, feature_groups={"all": range(4)}, rng=_rng())
