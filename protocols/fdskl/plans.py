"""Choosing FDSKL's trees: T1 and one T2 per excluded worker, checked before use.

:func:`build_plan` only returns trees that satisfy Definition 2 (totally
different) *and* leave every single worker without an exact combination of
other workers' partial products (:mod:`fedsec.protocols.fdskl.exposure`), and
refuses (with the reason) when none exist.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fedsec.errors import ValidationError
from fedsec.protocols.fdskl.exposure import Call, exposure, single_worker_leaks
from fedsec.protocols.fdskl.trees import (
    KINDS,
    Tree,
    as_lists,
    balanced,
    from_lists,
    layout,
    star,
    totally_different,
)

MAX_CANDIDATES = 4000
"""T2 orders tried per excluded worker before the search gives up (an explicit limit)."""


@dataclass(frozen=True)
class TreePlan:
    """The trees one requester uses: T1 over all workers, one T2 per excluded worker.

    ``refused`` lists earlier T1 layouts the builder rejected, with the reason.
    """

    kind: str
    workers: tuple[str, ...]
    requester: str
    t1: Tree
    t2: Mapping[str, Tree]
    refused: tuple[str, ...] = field(default=())

    def call(self, excluded: str | None) -> Call:
        """The Algorithm-3 call leaving ``excluded``'s offset in (None: no offsets, T1 only)."""
        return Call(self.workers, self.requester, self.t1,
                    None if excluded is None else self.t2[excluded], excluded)

    def to_dict(self) -> dict[str, object]:
        """JSON-able form (trees as nested lists), as recorded in the transcript."""
        return {"kind": self.kind, "workers": list(self.workers), "requester": self.requester,
                "t1": as_lists(self.t1), "t2": {k: as_lists(v) for k, v in self.t2.items()}}


def plan_from_dict(data: Mapping[str, Any]) -> TreePlan:
    """A plan as read back from a transcript's ``tree_plan`` message."""
    return TreePlan(kind=str(data["kind"]), workers=tuple(data["workers"]),
                    requester=str(data["requester"]), t1=from_lists(data["t1"]),
                    t2={k: from_lists(v) for k, v in dict(data["t2"]).items()})


def _t1_candidates(kind: str, requester: str, others: Sequence[str]) -> list[tuple[str, Tree]]:
    order = [requester, *others]
    if kind == "tree":
        out = [("balanced over all workers (Figure 2a)", balanced(order))]
        if len(others) >= 2:
            out.append(("requester on top of a balanced tree of the others",
                        (requester, balanced(list(others)))))
        return out
    return [(kind, layout(kind, order))]


def _find_t2(kind: str, call_workers: tuple[str, ...], requester: str, t1: Tree,
             excluded: str) -> tuple[Tree | None, str]:
    """The first T2 (in a fixed order) that passes, or None and why none did."""
    members = [w for w in call_workers if w != excluded]
    hub = [w for w in members if w != requester]
    only_total = star([*hub, requester])  # the requester sees nothing of T2 but the total
    bound = exposure(Call(call_workers, requester, t1, only_total, excluded), [requester])
    if bound.recovered:  # the requester must learn the offsets' total, whatever T2 is
        return None, (f"the requester, from T1 and the offsets' total it needs, already "
                      f"computes a combination of the partial products of "
                      f"{', '.join(bound.recovered)} (any T2)")
    example = ""
    for n, order in enumerate(itertools.permutations(members)):
        if n >= MAX_CANDIDATES:
            return None, f"the first {MAX_CANDIDATES} T2 orders fail (search limit){example}"
        t2 = layout(kind, order)
        if not totally_different(t1, t2):
            continue
        leaks = single_worker_leaks(Call(call_workers, requester, t1, t2, excluded))
        if not leaks:
            return t2, ""
        if not example:
            who = leaks[0]
            rec = exposure(Call(call_workers, requester, t1, t2, excluded), [who]).recovered
            example = (f"; e.g. with T2={as_lists(t2)} worker {who} computes a combination "
                       f"of the partial products of {', '.join(rec)}")
    return None, f"every T2 order fails{example or ' (none is totally different from T1)'}"


def build_plan(workers: Sequence[str], requester: str, kind: str = "tree") -> TreePlan:
    """T1 and every T2 for ``requester``: totally different, no single worker learns a ``p``.

    Tries T1 layouts in order (for ``tree``: the paper's balanced layout, then
    the requester on top of a balanced tree of the others) and, for each
    excluded worker, T2 orders in a fixed order. Refuses with the reason when
    no layout passes: an exhaustive search proves it for that ``kind`` and
    ``q``; beyond :data:`MAX_CANDIDATES` orders the refusal says the search
    stopped.

    Examples
    --------
    >>> plan = build_plan(["a", "x", "y", "z"], "a")
    >>> plan.t1
    ('a', (('x', 'y'), 'z'))
    """
    workers = tuple(workers)
    if kind not in KINDS:
        raise ValidationError(f"Unknown communication structure {kind!r}; expected one of {KINDS}.")
    if requester not in workers:
        raise ValidationError(f"The requester {requester!r} is not one of the workers {workers}.")
    if len(workers) < 3:
        raise ValidationError(
            f"Algorithm 3 needs at least 3 workers; got {len(workers)}. With 2, T2 is the "
            "requester alone, so there is no second tree and the other worker's masked partial "
            "product reaches the requester directly. Use more workers or offsets=none."
        )
    others = [w for w in workers if w != requester]
    refused: list[str] = []
    for name, t1 in _t1_candidates(kind, requester, others):
        t2s: dict[str, Tree] = {}
        reason = ""
        for excluded in others:
            t2, why = _find_t2(kind, workers, requester, t1, excluded)
            if t2 is None:
                reason = f"T1 {name} {as_lists(t1)}: with l'={excluded}, {why}"
                break
            t2s[excluded] = t2
        if not reason:
            return TreePlan(kind, workers, requester, t1, t2s, tuple(refused))
        refused.append(reason)
    raise ValidationError(
        f"No {kind} layout for {len(workers)} workers keeps T1 and T2 totally different and "
        f"every single worker blind to other workers' partial products: {'; '.join(refused)}."
    )


def total_tree(plan: TreePlan) -> Tree:
    """A tree over every worker but the requester along which masks of a T1 sum are summed, so
    that the requester learns the plain total and nothing else (the median kernel width).

    The first layout of ``plan.kind`` over the others (orders in a fixed order) with which no
    single worker other than the requester computes a combination of other workers' partial
    values and the requester computes only their total (:func:`exposure` with the requester as
    the worker whose own mask stays in, which it knows).

    Examples
    --------
    >>> total_tree(build_plan(["a", "x", "y", "z"], "a"))
    (('y', 'x'), 'z')
    """
    others = [w for w in plan.workers if w != plan.requester]
    for n, order in enumerate(itertools.permutations(others)):
        if n >= MAX_CANDIDATES:
            break
        tree = layout(plan.kind, order)
        call = Call(plan.workers, plan.requester, plan.t1, tree, plan.requester)
        if any(exposure(call, [w]).recovered for w in others):
            continue
        if exposure(call, [plan.requester]).combinations.shape[0] > 1:
            continue
        return tree
    raise ValidationError(
        f"No {plan.kind} layout over the {len(others)} workers other than {plan.requester} lets "
        f"the requester learn the total of a T1 sum and no single worker more (the median kernel "
        f"width). Use width_rule=scale or a kernel_width."
    )
