"""How deep a model nests, checked before anything walks it (issue 30, item 3).

The printer, the checks, the compiler and the process pool's pickling walk
a model recursively, one or more Python frames per level, so a model may
nest at most :data:`MAX_NESTING` levels: a ``Loop``, ``Repeat``,
``Condition`` or ``Runon`` arm, and a ``Call`` (its subroutine's body is
inlined there), each count one, along any path from the main body through
every call.  :func:`check_nesting` measures that without recursion (one
pass per body) and refuses a deeper model with one error naming where the
limit was passed, and a cycle of calls with the cycle
(``a calls b, b calls a``).

>>> from pevpm.model.ast import Call, Loop, Model, Serial
>>> from pevpm.model.expr import Expr
>>> body = (Serial(Expr.of(1)),)
>>> for _ in range(150):
...     body = (Loop(Expr.of(2), body),)
>>> check_nesting(Model(body, source="deep.py"))
Traceback (most recent call last):
...
pevpm.errors.ModelError: deep.py: the model nests 150 levels deep (at most 100 \
Loop, Repeat, Condition, Runon and Call levels): the main body
>>> subs = {"a": (Call("b"),), "b": (Call("a"),)}
>>> check_nesting(Model((Call("a"),), subroutines=subs, source="m.c"))
Traceback (most recent call last):
...
pevpm.errors.ModelError: m.c: subroutines call each other in a cycle \
(a calls b, b calls a); recursion cannot be inlined
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise

from pevpm.errors import ModelError
from pevpm.model.ast import Call, Condition, Loop, Model, Repeat, Runon

#: Most levels of blocks and calls along any path through a model.
MAX_NESTING = 100


@dataclass(frozen=True)
class _Body:
    """One body's own deepest block nesting, and its calls with their depth."""

    deepest: int
    beyond: object                # the first block past the limit in this body (or None)
    calls: tuple[tuple[int, Call], ...]


def _measure(statements, limit: int) -> _Body:
    deepest, beyond, calls = 0, None, []
    stack = [(stmt, 0) for stmt in reversed(statements)]
    while stack:
        stmt, depth = stack.pop()
        if isinstance(stmt, Call):
            calls.append((depth, stmt))
            continue
        if isinstance(stmt, (Loop, Repeat)):
            inner = [s for s in stmt.body]
        elif isinstance(stmt, (Condition, Runon)):
            inner = [s for b in stmt.branches for s in b.body]
        else:
            continue
        deepest = max(deepest, depth + 1)
        if depth + 1 == limit + 1 and beyond is None:
            beyond = stmt
        stack.extend((s, depth + 1) for s in reversed(inner))
    return _Body(deepest, beyond, tuple(calls))


def call_cycle(graph: Mapping[str, object], start: str) -> list[str] | None:
    """The names of a cycle of calls from ``start`` back to it (``graph``: each
    subroutine's callees), or None.

    >>> call_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}, "a")
    ['a', 'b', 'c', 'a']
    >>> call_cycle({"a": {"b"}, "b": set()}, "a") is None
    True
    """
    parent: dict[str, str] = {}
    stack = [(callee, start) for callee in sorted(graph.get(start, ()))]
    while stack:
        name, caller = stack.pop()
        if name in parent:
            continue
        parent[name] = caller
        if name == start:
            path, step = [start], caller
            while step != start:
                path.append(step)
                step = parent[step]
            return [start, *reversed(path[1:]), start]
        stack.extend((callee, name) for callee in sorted(graph.get(name, ())))
    return None


def cycle_words(cycle: list[str]) -> str:
    """``a calls b, b calls a`` for the cycle ``[a, b, a]``.

    >>> cycle_words(["a", "a"])
    'a calls a'
    """
    return ", ".join(f"{x} calls {y}" for x, y in pairwise(cycle))


def _where(model: Model, stmt) -> str | None:
    loc = getattr(stmt, "loc", None)
    return str(loc) if loc else model.source


def check_nesting(model: Model, limit: int = MAX_NESTING) -> None:
    """Raise :class:`ModelError` when a path through ``model`` nests more than
    ``limit`` levels or its subroutines call each other in a cycle (see the
    module's examples)."""
    bodies = {name: _measure(body, limit) for name, body in model.subroutines.items()}
    graph = {name: {c.name for _, c in b.calls} for name, b in bodies.items()}
    for name in sorted(graph):
        cycle = call_cycle(graph, name)
        if cycle:
            first = next(c for _, c in bodies[name].calls if c.name == cycle[1])
            raise ModelError(f"subroutines call each other in a cycle ({cycle_words(cycle)}); "
                             "recursion cannot be inlined" if len(cycle) > 2 else
                             f"subroutine {name!r} calls itself; recursion cannot be inlined",
                             _where(model, first))
    depths: dict[str, int] = {}
    for name in _callees_first(graph):
        depths[name] = _inlined(bodies[name], depths)
    main = _measure(model.body, limit)
    total = _inlined(main, depths)
    if total > limit:
        path, last = _deepest_path(main, bodies, depths)
        raise ModelError(f"the model nests {total} levels deep (at most {limit} Loop, Repeat, "
                         f"Condition, Runon and Call levels): {path}",
                         _where(model, last.beyond) if last.beyond else model.source)


def _inlined(body: _Body, depths: Mapping[str, int]) -> int:
    """Levels of ``body`` once its calls are inlined (undefined callees: 1)."""
    return max([body.deepest, *(d + 1 + depths.get(c.name, 0) for d, c in body.calls)])


def _callees_first(graph: Mapping[str, set[str]]) -> list[str]:
    """Subroutine names, every callee before its callers (``graph`` is acyclic)."""
    order, done = [], set()
    for root in sorted(graph):
        stack = [(root, False)]
        while stack:
            name, expanded = stack.pop()
            if name in done or name not in graph:
                continue
            if expanded:
                done.add(name)
                order.append(name)
                continue
            stack.append((name, True))
            stack.extend((callee, False) for callee in sorted(graph[name]) if callee not in done)
    return order


def _deepest_path(main: _Body, bodies: Mapping[str, _Body],
                  depths: Mapping[str, int]) -> tuple[str, _Body]:
    """Where the deepest path goes, as words (the first calls and the last), and
    the body it ends in."""
    steps, body, caller = [], main, "the main body"
    while True:
        best = max(body.calls, default=None,
                   key=lambda dc: dc[0] + 1 + depths.get(dc[1].name, 0))
        if best is None or best[0] + 1 + depths.get(best[1].name, 0) <= body.deepest \
                or best[1].name not in bodies:
            break
        steps.append(f"{caller if caller != 'the main body' else 'main'} calls {best[1].name}")
        caller, body = best[1].name, bodies[best[1].name]
    if not steps:
        return caller, body
    if len(steps) > 4:
        steps = steps[:3] + [f"... {steps[-1]}"]
    return ", ".join(steps), body
