"""Keystrokes: synthetic typing sessions in three sequence views, cohorts by participant."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fedsec.data import dataset_options, load, load_spec, make_keystrokes
from fedsec.data.keystrokes import MOTION_STEPS, motion_length
from fedsec.data.registry import SUMMARIES
from fedsec.data.sequences import sequence_layouts, split_present, to_steps
from fedsec.errors import ValidationError

SILENT = {"keys_signal": 0.0, "special_signal": 0.0, "motion_signal": 0.0}


@pytest.fixture(scope="module")
def sessions():
    return load("keystrokes")


def _views(ds):
    """Each view's steps ``(n, T, c)`` without ``present``, and each sequence's length."""
    out = {}
    for view, layout in sequence_layouts(ds).items():
        steps = to_steps(ds.X[:, ds.feature_groups[view]], layout)
        out[view] = (steps, *split_present(steps, layout))
    return out


def _summaries(steps, lengths):
    """Per sequence: its length, and the mean and standard deviation of each channel."""
    mask = (np.arange(steps.shape[1])[None, :] < lengths[:, None])[:, :, None]
    mean = (steps * mask).sum(axis=1) / lengths[:, None]
    spread = np.sqrt((((steps - mean[:, None]) * mask) ** 2).sum(axis=1) / lengths[:, None])
    return np.column_stack([lengths, mean, spread])


def _accuracy(ds, view):
    """5-fold accuracy of a logistic regression on the view's per-session summaries."""
    _, inputs, lengths = _views(ds)[view]
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    return cross_val_score(model, _summaries(inputs, lengths), ds.y, cv=folds).mean()


def _participant_majority(ds):
    """Accuracy of predicting each participant's most frequent label (the no-signal floor)."""
    hits = sum(max(np.bincount(ds.y[ds.cohorts == p], minlength=2))
               for p in np.unique(ds.cohorts))
    return hits / ds.n_samples


def test_default_shape_views_and_classes(sessions):
    assert sessions.X.shape == (480, 850) and sessions.task == "binary"
    assert sessions.class_names == ("calm", "elevated") and sessions.test_rows is None
    layouts = sequence_layouts(sessions)
    assert {v: (lay.inputs, lay.length) for v, lay in layouts.items()} == {
        "keys": (("duration", "latency", "dx", "dy"), 100),
        "special": (("backspace", "autocorrect", "suggestion", "switch", "gap"), 25),
        "motion": (("x", "y", "z"), 50),
    }
    assert all(lay.channels[-1] == "present" for lay in layouts.values())
    assert "keystrokes" in SUMMARIES and "basic_motions" in SUMMARIES
    assert dataset_options("keystrokes") == {
        "participants": 8, "sessions": 60, "min_presses": 10, "max_presses": 100,
        "keys_signal": 1.0, "special_signal": 0.5, "motion_signal": 0.5, "seed": 0}


def test_cohorts_are_participants_and_differ(sessions):
    np.testing.assert_array_equal(sessions.cohorts, np.repeat(np.arange(8), 60))
    _, inputs, lengths = _views(sessions)["keys"]
    latency = _summaries(inputs, lengths)[:, 2]  # mean latency of each session
    means = np.array([latency[sessions.cohorts == p].mean() for p in range(8)])
    within = np.mean([latency[sessions.cohorts == p].std() for p in range(8)])
    assert means.std() > within / np.sqrt(60) * 3  # participants type at their own speed
    rates = [sessions.y[sessions.cohorts == p].mean() for p in range(8)]
    assert max(rates) - min(rates) > 0.2  # and have their own base rate


def test_values_are_roughly_unit_scale(sessions):
    for view, (_, inputs, _) in _views(sessions).items():
        assert np.abs(inputs).max() < 10, view
        assert np.abs(inputs).max() > 0.5, view


@settings(max_examples=30, deadline=None)
@given(participants=st.integers(1, 3), sessions=st.integers(1, 4),
       min_presses=st.integers(1, 30), extra=st.integers(0, 40), seed=st.integers(0, 2**32))
def test_every_view_follows_the_sequence_convention(participants, sessions, min_presses,
                                                    extra, seed):
    max_presses = min_presses + extra
    ds = make_keystrokes(participants=participants, sessions=sessions,
                         min_presses=min_presses, max_presses=max_presses, seed=seed)

    views = _views(ds)  # split_present checks 0/1 flags, no empty sequence, padding last

    assert ds.n_samples == participants * sessions
    keys, special, motion = views["keys"], views["special"], views["motion"]
    assert keys[0].shape[1] == max_presses and special[0].shape[1] == max(1, max_presses // 4)
    assert ((min_presses <= keys[2]) & (keys[2] <= max_presses)).all()
    assert ((special[2] >= 1) & (special[2] <= np.minimum(keys[2], special[0].shape[1]))).all()
    assert ((motion[2] >= 1) & (motion[2] <= MOTION_STEPS)).all()
    for steps, _, lengths in views.values():
        padding = np.arange(steps.shape[1])[None, :] >= lengths[:, None]
        assert (steps[padding] == 0.0).all()
    real = np.arange(special[0].shape[1])[None, :] < special[2][:, None]
    np.testing.assert_array_equal(special[1][:, :, :4].sum(axis=2)[real], 1.0)  # one-hot
    duration = (keys[1][:, :, 1]).sum(axis=1)  # latencies add up to the session's duration
    expected = [{motion_length(d * (1 - 1e-9)), motion_length(d * (1 + 1e-9))} for d in duration]
    assert all(int(m) in e for m, e in zip(motion[2], expected, strict=True))


def test_same_seed_same_data_other_seed_other_data():
    a = make_keystrokes(participants=2, sessions=10, seed=3)
    b = make_keystrokes(participants=2, sessions=10, seed=3)
    c = make_keystrokes(participants=2, sessions=10, seed=4)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    assert not np.array_equal(a.X, c.X)
    assert "seed=4" in c.notes


def test_more_participants_leave_the_first_ones_unchanged():
    few = make_keystrokes(participants=2, sessions=5, seed=1)
    more = make_keystrokes(participants=3, sessions=5, seed=1)
    np.testing.assert_array_equal(more.X[:10], few.X)
    np.testing.assert_array_equal(more.y[:10], few.y)


@pytest.mark.parametrize("view", ["keys", "special", "motion"])
def test_a_signal_option_changes_only_its_own_view(view):
    base = make_keystrokes(participants=2, sessions=10, seed=2)
    changed = make_keystrokes(participants=2, sessions=10, seed=2, **{f"{view}_signal": 3.0})
    np.testing.assert_array_equal(base.y, changed.y)
    for other, columns in base.feature_groups.items():
        same = np.array_equal(base.X[:, columns], changed.X[:, columns])
        assert same == (other != view), other


def test_default_signal_is_learnable_from_summary_statistics(sessions):
    floor = _participant_majority(sessions)
    accuracy = {view: _accuracy(sessions, view) for view in sessions.feature_groups}
    assert 0.75 <= accuracy["keys"] <= 0.95
    for view in ("special", "motion"):
        assert 0.65 <= accuracy[view] <= 0.9, view
        assert accuracy[view] > floor, view


def test_zero_signal_leaves_only_chance():
    silent = load("keystrokes", **SILENT)
    floor = _participant_majority(silent)  # what knowing the participant alone gives
    for view in silent.feature_groups:
        assert _accuracy(silent, view) < min(floor, 0.66), view


@pytest.mark.parametrize(
    ("options", "pattern"),
    [
        ({"participants": 0}, "'participants'"),
        ({"sessions": 1.5}, "'sessions'"),
        ({"min_presses": 0}, "'min_presses'"),
        ({"max_presses": 5000}, "'max_presses'"),
        ({"min_presses": 20, "max_presses": 10},
         r"max_presses \(10\) is below min_presses \(20\)\. Raise max_presses or lower"),
        ({"keys_signal": -1.0}, "'keys_signal'.*>= 0"),
        ({"motion_signal": float("nan")}, "'motion_signal'"),
        ({"special_signal": "high"}, "'special_signal'"),
        ({"seed": -1}, "'seed'"),
    ],
)
def test_bad_options_are_refused_by_name(options, pattern):
    with pytest.raises(ValidationError, match=pattern):
        make_keystrokes(**options)


def test_spec_options_are_typed():
    ds = load_spec("keystrokes:participants=2,sessions=3,keys_signal=0,max_presses=40")
    assert ds.n_samples == 6 and "keys_signal=0" in ds.notes
    assert sequence_layouts(ds)["keys"].length == 40
    with pytest.raises(ValidationError, match="must be a number"):
        load_spec("keystrokes:motion_signal=strong")
