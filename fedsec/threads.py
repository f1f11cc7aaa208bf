"""How many threads the linear-algebra libraries may use while fedsec computes.

A run is a long chain of small and medium matrix products. Multi-threaded BLAS gains little on
them and, on a busy machine, its threads spin waiting for cores: a serial audit of the
benchmark grid costs about twice the CPU time with the default threads as with one (see
``tests/benchmarks/bench_audit.py``). So serial work
(``fedsec run``, :func:`fedsec.runner.run`, the cells of an audit) holds the native thread
pools (BLAS and OpenMP, through threadpoolctl) at one thread, as the audit's worker processes
do, and gives them back as it found them when it returns.

The environment variable ``FEDSEC_THREADS`` overrides the limit: a number of threads, or
``all`` to leave the libraries their own setting (for one large run on an idle machine).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from fedsec.errors import ValidationError

ENVIRONMENT_VARIABLE = "FEDSEC_THREADS"
DEFAULT_THREADS = 1


def thread_limit(value: str | None = None) -> int | None:
    """The number of native threads allowed, read from ``value`` (default: the environment).

    None means no limit (``all``).

    Examples
    --------
    >>> thread_limit(""), thread_limit("4"), thread_limit("all") is None
    (1, 4, True)
    """
    text = os.environ.get(ENVIRONMENT_VARIABLE, "") if value is None else value
    text = text.strip().lower()
    if not text:
        return DEFAULT_THREADS
    if text == "all":
        return None
    if text.isdigit() and int(text) >= 1:
        return int(text)
    raise ValidationError(f"The environment variable {ENVIRONMENT_VARIABLE} must be a number of "
                          f"threads >= 1 or 'all'. Got {text!r} instead.")


@contextlib.contextmanager
def limited_threads(threads: int | None = None) -> Iterator[None]:
    """Hold the BLAS and OpenMP thread pools at ``threads`` threads inside the block.

    ``threads`` defaults to :func:`thread_limit` (``FEDSEC_THREADS``, else one thread; with
    ``all`` the block runs unlimited). The previous limits are restored on exit, so a Python
    caller's own setting survives a run.
    """
    if threads is None:
        threads = thread_limit()
    if threads is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=threads):
        yield
