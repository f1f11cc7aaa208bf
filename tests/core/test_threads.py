"""Serial runs hold the linear-algebra libraries at one thread, and give them back."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from fedsec.errors import ValidationError
from fedsec.runner import RunConfig, run
from fedsec.threads import ENVIRONMENT_VARIABLE, limited_threads, thread_limit

CONFIG = RunConfig(protocol="fedcg-naive", dataset="iris",
                   partition="hybrid:cohorts=2,groups=2,centres=per-cohort",
                   params={"n_landmarks": 5}, seed=3, secret_seed=3)


def threads() -> list[int]:
    """How many threads each loaded BLAS or OpenMP library may use (those another test left
    pinned to one thread, such as the OpenMP runtime torch sets for itself, are left out:
    no limit can raise them)."""
    with threadpool_limits(limits=2):
        settable = [pool["num_threads"] == 2 for pool in threadpool_info()]
    return [pool["num_threads"] for pool, ok in zip(threadpool_info(), settable, strict=False)
            if ok]


def test_the_limit_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    assert thread_limit() == 1
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, " 3 ")
    assert thread_limit() == 3
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "ALL")
    assert thread_limit() is None
    for bad in ("0", "-2", "two", "1.5"):
        with pytest.raises(ValidationError, match=f"FEDSEC_THREADS must be .* Got '{bad}'"):
            thread_limit(bad)


def test_a_run_uses_one_thread_and_restores_the_callers_setting(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    run(CONFIG)  # every library the run uses is loaded
    seen: list[list[int]] = []
    with threadpool_limits(limits=2):
        before = threads()
        run(CONFIG, progress=lambda _text: seen.append(threads()))
        assert threads() == before
    assert seen and all(counts == [1] * len(counts) for counts in seen)
    assert before == [2] * len(before)


def test_all_leaves_the_libraries_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    run(CONFIG)  # every library the run uses is loaded
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "all")
    seen: list[list[int]] = []
    with threadpool_limits(limits=2):
        run(CONFIG, progress=lambda _text: seen.append(threads()))
    assert seen and all(counts == [2] * len(counts) for counts in seen)


def test_the_same_seed_still_gives_the_same_transcript(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    first = run(CONFIG)
    with threadpool_limits(limits=2):  # the caller's own setting does not reach the run
        second = run(CONFIG)
    assert first.transcript.footer["head"] == second.transcript.footer["head"]
    assert first.record.federated_metrics == second.record.federated_metrics


def test_limited_threads_nests_and_restores() -> None:
    np.ones((2, 2)) @ np.ones((2, 2))
    outer = threads()
    with limited_threads(1):
        assert set(threads()) == {1}
        with limited_threads(2):
            assert set(threads()) == {2}
        assert set(threads()) == {1}
    assert threads() == outer
