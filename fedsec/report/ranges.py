"""Sets of configurations in words: the fewest boxes that cover them, each box's values
written as ranges ("n_landmarks ≥ 3", "under plain, noise and ckks alike")."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

Box = tuple[frozenset[Any], ...]

#: Dimensions in the order a phrase names them (the backend last: "..., under plain").
ORDER = ("protocol", "dataset", "defence", "param", "backend")


def dimensions(config: Mapping[str, Any]) -> dict[str, Hashable]:
    """A configuration's coordinates: protocol, dataset, defence, each parameter, backend.

    Examples
    --------
    >>> dimensions({"protocol": "p", "dataset": "", "backend": "plain", "defense": None,
    ...             "params": {"m": 3}})
    {'protocol': 'p', 'dataset': '', 'defence': None, 'param:m': 3, 'backend': 'plain'}
    """
    defence = config.get("defense")
    out: dict[str, Hashable] = {
        "protocol": config["protocol"], "dataset": config.get("dataset") or "",
        "defence": None if defence is None else (
            defence["name"], tuple(sorted((k, _hashable(v))
                                          for k, v in defence.get("params", {}).items()))),
    }
    out.update({f"param:{k}": _hashable(v) for k, v in sorted(config["params"].items())})
    out["backend"] = config["backend"]
    return out


def cover(points: set[tuple[Any, ...]], n_dims: int) -> list[Box]:
    """Boxes (one set of values per dimension) whose union is exactly ``points``, found by
    trying every order of the dimensions (up to six) and keeping the fewest boxes.

    Examples
    --------
    >>> boxes = cover({("a", 1), ("a", 2), ("b", 1), ("b", 2), ("c", 1)}, 2)
    >>> sorted((sorted(b[0]), sorted(b[1])) for b in boxes)
    [(['a', 'b'], [1, 2]), (['c'], [1])]
    """
    if not points:
        return []
    orders = (itertools.permutations(range(n_dims)) if n_dims <= 6 else [tuple(range(n_dims))])
    best: list[Box] | None = None
    for order in orders:
        reordered = {tuple(p[i] for i in order) for p in points}
        boxes = _cover_in_order(reordered, n_dims)
        if best is None or len(boxes) < len(best):
            back = [tuple(box[order.index(i)] for i in range(n_dims)) for box in boxes]
            best = back
    assert best is not None
    return best


def _cover_in_order(points: set[tuple[Any, ...]], n_dims: int) -> list[Box]:
    if n_dims == 0:
        return [()]
    rests: dict[Any, set[tuple[Any, ...]]] = defaultdict(set)
    for point in points:
        rests[point[0]].add(point[1:])
    merged: dict[frozenset[tuple[Any, ...]], list[Any]] = defaultdict(list)
    for value, rest in rests.items():
        merged[frozenset(rest)].append(value)
    return [(frozenset(values), *sub) for rest, values in merged.items()
            for sub in _cover_in_order(set(rest), n_dims - 1)]


def value_range(name: str, chosen: frozenset[Any], universe: Sequence[Any]) -> str:
    """``chosen`` among the swept ``universe`` of a numeric parameter, as a range.

    Examples
    --------
    >>> u = [2, 3, 5, 10, 20]
    >>> value_range("m", frozenset({3, 5, 10, 20}), u), value_range("m", frozenset({2}), u)
    ('m ≥ 3', 'm = 2')
    >>> value_range("m", frozenset({3, 5}), u), value_range("m", frozenset({2, 5, 20}), u)
    ('3 ≤ m ≤ 5', 'm = 2, 5 or 20')
    >>> value_range("m", frozenset(u), u)
    'every m from 2 to 20'
    """
    ordered = sorted(universe, key=_sort_key)
    picked = [v for v in ordered if v in chosen]
    if len(picked) == len(ordered) and len(ordered) > 1:
        return f"every {name} from {_show(ordered[0])} to {_show(ordered[-1])}"
    if len(picked) == 1:
        return f"{name} = {_show(picked[0])}"
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in ordered)
    at = [ordered.index(v) for v in picked]
    if numeric and at == list(range(at[0], at[-1] + 1)):
        if at[-1] == len(ordered) - 1:
            return f"{name} ≥ {_show(picked[0])}"
        if at[0] == 0:
            return f"{name} ≤ {_show(picked[-1])}"
        return f"{_show(picked[0])} ≤ {name} ≤ {_show(picked[-1])}"
    if len(picked) > 5:
        return (f"{len(picked)} of the {len(ordered)} values of {name} "
                f"({_show(picked[0])} to {_show(picked[-1])})")
    return f"{name} = {words([_show(v) for v in picked], 'or')}"


def words(items: Sequence[str], conjunction: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {conjunction} " + items[-1]


def describe_box(box: Mapping[str, frozenset[Any]], universe: Mapping[str, Sequence[Any]],
                 *, omit_whole: bool = False) -> str:
    """One box of configurations in words; dimensions the whole audit holds fixed are not
    named, and a dimension the box spans entirely is said to change nothing ("alike"), or
    not named either with ``omit_whole``.

    Examples
    --------
    >>> universe = {"protocol": ["a", "b"], "dataset": [""], "defence": [None],
    ...             "param:m": [2, 3, 5], "backend": ["plain", "ckks"]}
    >>> describe_box({"protocol": frozenset({"a"}), "dataset": frozenset({""}),
    ...               "defence": frozenset({None}), "param:m": frozenset({3, 5}),
    ...               "backend": frozenset({"plain", "ckks"})}, universe)
    'for a, at m ≥ 3, under ckks and plain alike'
    """
    parts: dict[str, list[str]] = defaultdict(list)
    for dim, chosen in box.items():
        every = list(universe.get(dim, ()))
        whole = set(chosen) == set(every)
        if len(every) <= 1 or (whole and omit_whole):
            continue
        names = sorted(_show(v) for v in chosen)
        kind = dim.split(":")[0]
        if kind == "protocol":
            text = "for " + (f"{words(names)} alike" if whole else words(names, "or"))
        elif kind == "dataset":
            text = f"on every dataset ({words(names)})" if whole else f"on {words(names, 'or')}"
        elif kind == "backend":
            text = f"under {words(names)} alike" if whole else f"under {words(names, 'or')}"
        elif kind == "defence":
            text = describe_defences(chosen, every)
        else:
            text = value_range(dim.removeprefix("param:"), chosen, every)
        parts[kind].append(text)
    if parts["param"]:
        parts["param"] = ["at " + words(parts["param"])]
    return ", ".join(p for kind in ORDER for p in parts[kind]) or "in every configuration"


def describe_defences(chosen: frozenset[Any], universe: Sequence[Any]) -> str:
    """Defence values (None, or (name, params)) in words, one varying parameter as a range.

    Examples
    --------
    >>> every = [None, ("noise", (("sigma", 0.1),)), ("noise", (("sigma", 1.0),))]
    >>> describe_defences(frozenset(every[2:]), every)
    'with noise (sigma = 1)'
    >>> describe_defences(frozenset(every), every)
    'with or without defence'
    """
    if set(chosen) == set(universe) and len(universe) > 1:
        return "with or without defence"
    parts = ["without defence"] if None in chosen else []
    by_name: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for value in chosen:
        if value is not None:
            by_name[value[0]].append(value[1])
    for name in sorted(by_name):
        settings = by_name[name]
        every = [v[1] for v in universe if v is not None and v[0] == name]
        keys = sorted({k for s in every for k, _ in s})
        varying = [k for k in keys if len({dict(s).get(k) for s in every}) > 1]
        fixed = [f"{k} = {_show(dict(every[0]).get(k))}" for k in keys if k not in varying]
        if len(varying) <= 1:
            spans = [value_range(key, frozenset(dict(s).get(key) for s in settings),
                                 sorted({dict(s).get(key) for s in every}, key=_sort_key))
                     for key in varying]
            inside = ", ".join(fixed + spans)
            parts.append(f"with {name}" + (f" ({inside})" if inside else ""))
        else:
            parts.append(words([f"with {name} (" + ", ".join(f"{k} = {_show(v)}" for k, v in s)
                                + ")" for s in sorted(settings, key=str)], "or"))
    return words(parts, "or")


def defence_list(values: frozenset[Any]) -> str:
    """The defences among ``values`` with the settings tried, in words.

    Examples
    --------
    >>> defence_list(frozenset({("noise", (("sigma", 0.1),)), ("noise", (("sigma", 1.0),)),
    ...                         None}))
    'noise (sigma 0.1 or 1)'
    """
    settings: dict[str, dict[str, set[Any]]] = defaultdict(lambda: defaultdict(set))
    for value in values:
        if value is not None:
            for key, setting in value[1]:
                settings[value[0]][key].add(setting)
            settings[value[0]]  # a defence without parameters is named too
    return words([name + (" (" + ", ".join(
        f"{k} {words([_show(v) for v in sorted(vs, key=_sort_key)], 'or')}"
        for k, vs in sorted(keys.items())) + ")" if keys else "")
        for name, keys in sorted(settings.items())])


def universe_of(coords: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """Every value each dimension takes among ``coords``, in first-seen order."""
    out: dict[str, list[Any]] = {}
    for point in coords:
        for dim, value in point.items():
            seen = out.setdefault(dim, [])
            if value not in seen:
                seen.append(value)
    return out


def phrase(coords: Sequence[Mapping[str, Any]], universe: Mapping[str, Sequence[Any]],
           *, drop: Sequence[str] = (), omit_whole: bool = False) -> list[str]:
    """The configurations at ``coords`` in words, one phrase per box of :func:`cover`,
    leaving out the dimensions in ``drop`` (see :func:`describe_box` for ``omit_whole``)."""
    dims = [d for d in _ordered(universe) if d not in drop]
    points = {tuple(p.get(d) for d in dims) for p in coords}
    boxes = cover(points, len(dims))
    boxes.sort(key=lambda box: [sorted(map(_sort_key, values)) for values in box])
    return [describe_box(dict(zip(dims, box, strict=True)), universe, omit_whole=omit_whole)
            for box in boxes]


def _ordered(universe: Mapping[str, Any]) -> list[str]:
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(universe, key=lambda d: (rank[d.split(":")[0]], d))


def _hashable(value: Any) -> Hashable:
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, sort_keys=True)
    return value


def _sort_key(value: Any) -> tuple[int, Any]:
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (1, value)
    return (2, str(value))


def _show(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
