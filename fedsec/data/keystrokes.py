"""Synthetic multi-view keystroke sessions, in the manner of the FedMV paper's BiAffect data.

The FedMV paper (section 8) predicts a binary mood label per typing session from three
sequence views recorded by a phone keyboard: alphanumeric key presses (hold duration, time
since the previous press, touch position), special keys (backspace, autocorrect, suggestion,
keyboard switch) and the accelerometer. Its data are not public; this generator produces
sessions of the same shape, each participant with a typing baseline of their own, so a
partition by participant (the dataset's ``cohorts``) is non-IID in both features and labels.

A session is drawn in two steps. Its skeleton (number of key presses ``n``, duration ``D``
in seconds, mood label) depends on the participant only, never on the label's effect, so the
length of every view is label-free except through the special-key count, which the special
view's own signal controls. Each view is then drawn given the skeleton, from its own random
stream, and the label shifts it by ``±signal / 2`` (``shift``: ``-signal / 2`` for calm,
``+signal / 2`` for elevated) in the quantities listed in :func:`make_keystrokes`. With
``signal = 0`` a view carries no information about the label beyond the participant's base
rate.

Times use units that keep values near 1: key holds in tenths of a second, latencies in
seconds, gaps between special keys in tens of seconds; touch offsets in key widths,
accelerations in g.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedsec.data.dataset import Dataset
from fedsec.data.sequences import PRESENT, sequence_feature_names
from fedsec.errors import ValidationError
from fedsec.seeding import generator
from fedsec.validation import check_float, check_int

CLASS_NAMES = ("calm", "elevated")
KEY_CHANNELS = ("duration", "latency", "dx", "dy")
SPECIAL_KEYS = ("backspace", "autocorrect", "suggestion", "switch")
SPECIAL_CHANNELS = (*SPECIAL_KEYS, "gap")
MOTION_CHANNELS = ("x", "y", "z")
MOTION_PERIOD = 0.6
"""Seconds between two accelerometer samples (ten times the 60 ms of the BiAffect device)."""
MOTION_STEPS = 50
"""At most this many accelerometer samples per session (the first 30 seconds)."""
MAX_PRESSES_LIMIT = 1000

# Change of each quantity between an elevated and a calm session of one participant at
# signal 1 (the signal options scale them). Chosen so that, at the default signals, a
# logistic regression on per-session means and standard deviations of one view reaches
# about 0.86 (keys), 0.72 (special) and 0.73 (motion) accuracy in 5-fold cross-validation.
HOLD_EFFECT = 0.2        # log key-hold duration: elevated is shorter
RHYTHM_EFFECT = 0.4      # log gamma shape of the latencies: elevated is burstier
SPREAD_EFFECT = 0.15     # log spread of the touch offsets: elevated is sloppier
EVENT_EFFECT = 1.4       # log rate of special keys per press: elevated makes more
BACKSPACE_EFFECT = 1.4   # log odds of a backspace among special keys
TREMOR_EFFECT = 0.4      # log amplitude of hand movement: elevated moves more
TILT_EFFECT = 0.4        # tilt of the phone from flat, radians: elevated holds it flatter


@dataclass(frozen=True)
class Baseline:
    """One participant's typing habits, fixed over their sessions."""

    mood_rate: float        # probability that a session is elevated
    latency: float          # mean seconds between presses
    hold: float             # mean key hold, tenths of a second
    rhythm: float           # gamma shape of the latencies (larger is steadier)
    offset: np.ndarray      # mean touch offset (dx, dy), key widths
    spread: float           # standard deviation of the touch offsets, key widths
    event_rate: float       # special keys per key press
    key_mix: np.ndarray     # probability of each of SPECIAL_KEYS
    tilt: float             # angle of the phone from flat, radians
    turn: float             # rotation of the phone about the vertical, radians
    tremor: float           # amplitude of hand movement, g


def draw_baseline(rng: np.random.Generator) -> Baseline:
    """A participant's baseline: typing speed, error rate, hand tremor and the rest."""
    return Baseline(
        mood_rate=float(rng.uniform(0.25, 0.75)),
        latency=float(np.exp(rng.normal(np.log(0.3), 0.2))),
        hold=float(np.exp(rng.normal(0.0, 0.15))),
        rhythm=float(np.exp(rng.normal(np.log(3.0), 0.25))),
        offset=rng.normal(0.0, 0.08, size=2),
        spread=float(np.exp(rng.normal(np.log(0.25), 0.15))),
        event_rate=float(np.exp(rng.normal(np.log(0.08), 0.25))),
        key_mix=rng.dirichlet(np.full(len(SPECIAL_KEYS), 6.0)),
        tilt=float(rng.uniform(0.4, 1.1)),
        turn=float(rng.uniform(-0.4, 0.4)),
        tremor=float(np.exp(rng.normal(np.log(0.15), 0.2))),
    )


def label_shift(elevated: bool, signal: float) -> float:
    """``+signal / 2`` for an elevated session, ``-signal / 2`` for a calm one.

    Examples
    --------
    >>> label_shift(True, 1.0), label_shift(False, 1.0), label_shift(True, 0.0)
    (0.5, -0.5, 0.0)
    """
    return signal / 2 if elevated else -signal / 2


def session_skeleton(rng: np.random.Generator, baseline: Baseline, min_presses: int,
                     max_presses: int) -> tuple[int, float, bool]:
    """Number of presses, duration in seconds and mood of one session (label-free shape)."""
    n = int(rng.integers(min_presses, max_presses + 1))
    duration = n * baseline.latency * float(np.exp(rng.normal(0.0, 0.15)))
    return n, duration, bool(rng.random() < baseline.mood_rate)


def key_presses(rng: np.random.Generator, baseline: Baseline, n: int, duration: float,
                shift: float) -> np.ndarray:
    """``(n, 4)``: hold (0.1 s), latency (s), dx, dy (key widths) of each key press.

    The latencies split the session's duration (a Dirichlet draw), so their sum, and with
    it the motion view's length, does not depend on the label.
    """
    session = rng.normal(0.0, 0.1)
    holds = baseline.hold * np.exp(session - HOLD_EFFECT * shift + rng.normal(0.0, 0.3, n))
    shape = baseline.rhythm * np.exp(-RHYTHM_EFFECT * shift)
    gaps = rng.gamma(shape, 1.0, n)
    latencies = duration * gaps / gaps.sum()
    spread = baseline.spread * np.exp(SPREAD_EFFECT * shift)
    offsets = baseline.offset + spread * rng.standard_normal((n, 2))
    return np.column_stack([holds, latencies, offsets])


def special_events(rng: np.random.Generator, baseline: Baseline, n: int, duration: float,
                   shift: float, limit: int) -> np.ndarray:
    """``(k, 5)``: one-hot special key and gap (10 s) since the previous one, ``1 <= k``.

    ``k`` is one plus a binomial count over the other ``n - 1`` presses, at most ``limit``.
    """
    rate = min(baseline.event_rate * np.exp(EVENT_EFFECT * shift), 1.0)
    k = int(min(1 + rng.binomial(n - 1, rate), limit, n))
    logits = np.log(baseline.key_mix)
    logits[SPECIAL_KEYS.index("backspace")] += BACKSPACE_EFFECT * shift
    mix = np.exp(logits - logits.max())
    kinds = rng.choice(len(SPECIAL_KEYS), size=k, p=mix / mix.sum())
    times = np.sort(rng.uniform(0.0, duration, k))
    gaps = np.diff(times, prepend=0.0) / 10.0
    return np.column_stack([np.eye(len(SPECIAL_KEYS))[kinds], gaps])


def motion_length(duration: float) -> int:
    """Accelerometer samples of a session: one every :data:`MOTION_PERIOD` seconds, capped.

    Examples
    --------
    >>> motion_length(3.0), motion_length(600.0)
    (6, 50)
    """
    return int(min(1 + duration // MOTION_PERIOD, MOTION_STEPS))


def gravity(tilt: float, turn: float) -> np.ndarray:
    """Gravity in the phone's frame, in g, for a phone tilted ``tilt`` radians from flat.

    Examples
    --------
    >>> gravity(0.0, 0.0).tolist()
    [0.0, 0.0, 1.0]
    """
    return np.array([np.sin(turn) * np.sin(tilt), np.cos(turn) * np.sin(tilt), np.cos(tilt)])


def sway(noise: np.ndarray, persistence: float) -> np.ndarray:
    """An AR(1) path per column: ``s[t] = persistence * s[t - 1] + noise[t]``, ``s[-1] = 0``.

    Examples
    --------
    >>> sway(np.ones((3, 1)), 0.5).ravel().tolist()
    [1.0, 1.5, 1.75]
    """
    out = np.empty_like(noise)
    level = np.zeros(noise.shape[1])
    for t, step in enumerate(noise):
        level = persistence * level + step
        out[t] = level
    return out


def accelerometer(rng: np.random.Generator, baseline: Baseline, duration: float,
                  shift: float) -> np.ndarray:
    """``(L, 3)`` accelerations in g: gravity at the session's tilt, slow sway and tremor.

    The sway is stationary with standard deviation ``amplitude`` per axis; the tremor is
    white noise of half that.
    """
    length = motion_length(duration)
    tilt = baseline.tilt - TILT_EFFECT * shift + rng.normal(0.0, 0.05)
    amplitude = baseline.tremor * np.exp(TREMOR_EFFECT * shift)
    persistence = 0.8
    noise = rng.normal(0.0, amplitude * np.sqrt(1 - persistence**2), (length, 3))
    noise[0] /= np.sqrt(1 - persistence**2)
    tremor = 0.5 * amplitude * rng.standard_normal((length, 3))
    return gravity(tilt, baseline.turn) + sway(noise, persistence) + tremor


def padded(steps: np.ndarray, length: int) -> np.ndarray:
    """Steps ``(k, c)`` as one flattened row of ``length`` steps of ``c + 1`` channels.

    The last channel is :data:`~fedsec.data.sequences.PRESENT`; steps beyond ``k`` are zero.

    Examples
    --------
    >>> padded(np.array([[2.0], [3.0]]), 3).tolist()
    [2.0, 1.0, 3.0, 1.0, 0.0, 0.0]
    """
    k, channels = steps.shape
    out = np.zeros((length, channels + 1))
    out[:k, :channels] = steps
    out[:k, channels] = 1.0
    return out.ravel()


def make_keystrokes(
    *, participants: int = 8, sessions: int = 60, min_presses: int = 10,
    max_presses: int = 100, keys_signal: float = 1.0, special_signal: float = 0.5,
    motion_signal: float = 0.5, seed: int = 0,
) -> Dataset:
    """Synthetic typing sessions in three sequence views, with a binary mood label.

    Each participant has a baseline of their own (typing speed and rhythm, key hold time,
    touch accuracy, rate and mix of special keys, phone posture, hand tremor) and a base rate
    of elevated sessions drawn from ``[0.25, 0.75]``. A session has ``n`` key presses, drawn
    uniformly from ``[min_presses, max_presses]``, over ``n`` times the participant's mean
    latency (with a session-to-session factor). Views, stored as in
    :mod:`fedsec.data.sequences` with a ``present`` channel:

    - ``keys`` (``max_presses`` steps): ``duration`` (key hold, 0.1 s), ``latency`` (seconds
      since the previous press, or the session start), ``dx``, ``dy`` (touch offset from the
      key centre, key widths).
    - ``special`` (``max(1, max_presses // 4)`` steps, at least one event per session):
      one-hot ``backspace``, ``autocorrect``, ``suggestion``, ``switch`` and ``gap`` (time
      since the previous special key, or the session start, in tens of seconds).
    - ``motion`` (one sample every 0.6 s of the session, at most 50): accelerometer ``x``,
      ``y``, ``z`` in g.

    Parameters
    ----------
    participants : int, default 8
        Number of participants; ``cohorts`` holds each row's participant.
    sessions : int, default 60
        Sessions per participant; rows are grouped by participant.
    min_presses, max_presses : int, default 10 and 100
        Bounds of the number of key presses of a session.
    keys_signal : float, default 1.0
        How far the label moves the ``keys`` view. Against a calm session of the same
        participant, an elevated one has key holds shorter by a factor
        ``exp(-0.2 s)``, burstier latencies (their gamma shape times ``exp(-0.4 s)``) and
        touches more spread (times ``exp(0.15 s)``), ``s`` the signal. 0: the view carries
        no information about the label.
    special_signal : float, default 0.5
        For ``special``: special keys more frequent (rate per press times ``exp(1.4 s)``, so
        longer sequences) and backspace more likely among them (odds times ``exp(1.4 s)``).
        0: no information.
    motion_signal : float, default 0.5
        For ``motion``: hand sway and tremor larger (times ``exp(0.4 s)``) and the phone
        held flatter (``0.4 s`` radians closer to flat). 0: no information.
    seed : int, default 0
        Root seed; participant ``p`` draws from
        ``fedsec.seeding.generator(seed, f"dataset/keystrokes/{p}/<part>")`` with parts
        ``baseline``, ``sessions``, ``keys``, ``special`` and ``motion``, so one option
        changes only what depends on it.

    Returns
    -------
    Dataset
        ``participants * sessions`` rows, binary labels ``calm`` (0) and ``elevated`` (1),
        ``cohorts`` = participant, no ``test_rows``. Values are unscaled (read them with
        scaling ``"none"``).

    Examples
    --------
    >>> ds = make_keystrokes(participants=2, sessions=5, seed=1)
    >>> ds.n_samples, list(ds.feature_groups), ds.class_names
    (10, ['keys', 'special', 'motion'], ('calm', 'elevated'))
    >>> ds.feature_names[:5]
    ('keys.duration[0]', 'keys.latency[0]', 'keys.dx[0]', 'keys.dy[0]', 'keys.present[0]')
    """
    owner = "dataset 'keystrokes'"
    participants = check_int(participants, owner=owner, name="participants", min_value=1)
    sessions = check_int(sessions, owner=owner, name="sessions", min_value=1)
    min_presses = check_int(min_presses, owner=owner, name="min_presses", min_value=1,
                            max_value=MAX_PRESSES_LIMIT)
    max_presses = check_int(max_presses, owner=owner, name="max_presses", min_value=1,
                            max_value=MAX_PRESSES_LIMIT)
    if max_presses < min_presses:
        raise ValidationError(
            f"The options of {owner} are inconsistent: max_presses ({max_presses}) is below "
            f"min_presses ({min_presses}). Raise max_presses or lower min_presses.")
    signals = {name: check_float(value, owner=owner, name=name, min_value=0.0, max_value=10.0)
               for name, value in (("keys_signal", keys_signal),
                                   ("special_signal", special_signal),
                                   ("motion_signal", motion_signal))}
    seed = check_int(seed, owner=owner, name="seed", min_value=0)
    special_length = max(1, max_presses // 4)
    rows, labels = [], []
    for p in range(participants):
        baseline = draw_baseline(generator(seed, f"dataset/keystrokes/{p}/baseline"))
        skeleton_rng, keys_rng, special_rng, motion_rng = (
            generator(seed, f"dataset/keystrokes/{p}/{part}")
            for part in ("sessions", "keys", "special", "motion"))
        for _ in range(sessions):
            n, duration, elevated = session_skeleton(skeleton_rng, baseline, min_presses,
                                                     max_presses)
            keys = key_presses(keys_rng, baseline, n, duration,
                               label_shift(elevated, signals["keys_signal"]))
            special = special_events(special_rng, baseline, n, duration,
                                     label_shift(elevated, signals["special_signal"]),
                                     special_length)
            motion = accelerometer(motion_rng, baseline, duration,
                                   label_shift(elevated, signals["motion_signal"]))
            rows.append(np.concatenate([padded(keys, max_presses),
                                        padded(special, special_length),
                                        padded(motion, MOTION_STEPS)]))
            labels.append(int(elevated))
    names: list[str] = []
    groups: dict[str, tuple[int, ...]] = {}
    for view, channels, length in (("keys", KEY_CHANNELS, max_presses),
                                   ("special", SPECIAL_CHANNELS, special_length),
                                   ("motion", MOTION_CHANNELS, MOTION_STEPS)):
        view_names = sequence_feature_names(view, (*channels, PRESENT), length)
        groups[view] = tuple(range(len(names), len(names) + len(view_names)))
        names.extend(view_names)
    options = ", ".join(f"{k}={v:g}" for k, v in signals.items())
    return Dataset(
        name="keystrokes", X=np.vstack(rows), y=np.array(labels, dtype=np.int64),
        task="binary", feature_names=tuple(names), feature_groups=groups,
        class_names=CLASS_NAMES,
        cohorts=np.repeat(np.arange(participants, dtype=np.int64), sessions),
        source="Synthetic keystroke sessions in the manner of the FedMV paper's BiAffect data "
        "(keys, special keys, accelerometer)",
        notes=f"participants={participants}, sessions={sessions}, min_presses={min_presses}, "
        f"max_presses={max_presses}, {options}, seed={seed}. Cohorts are participants; rows "
        "grouped by participant. Sequence views, end-padded with a 'present' channel; read "
        "them with scaling 'none'.",
    )
