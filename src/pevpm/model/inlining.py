"""How big a model gets once its subroutines are inlined, checked before
anything is built.

The virtual machine inlines every ``Call``, so 40 subroutines that each call
the next twice would become 2**40 instructions.  :func:`check_inlined_size`
counts the instructions compiling would create (one per statement, plus one
per loop end and one per branch exit) with one pass per subroutine, and
refuses a model above :data:`MAX_INSTRUCTIONS`, naming the call chain that
multiplies the most.

>>> from pevpm.model.ast import Call, Model, Serial
>>> from pevpm.model.expr import Expr
>>> subs = {f"s{i}": (Call(f"s{i + 1}"), Call(f"s{i + 1}")) for i in range(40)}
>>> subs["s40"] = (Serial(Expr.of(1)),)
>>> model = Model((Call("s0"),), subroutines=subs, source="deep.c")
>>> inlined_size(model)
1099511627776
>>> check_inlined_size(model)
Traceback (most recent call last):
...
pevpm.errors.ModelError: deep.c: inlining subroutines would create 1099511627776 \
instructions (limit 1000000): main calls s0 (1 time), s0 calls s1 (2 times), \
s1 calls s2 (2 times), ... s39 calls s40 (2 times)
"""

from __future__ import annotations

from collections.abc import Mapping

from pevpm.errors import ModelError
from pevpm.model.ast import Call, Condition, Loop, Model, Repeat, Runon

#: Most instructions a compiled model may have after inlining (a few hundred
#: megabytes of closures at most; real models have thousands).
MAX_INSTRUCTIONS = 10**6


def inlined_size(model: Model) -> int:
    """Instructions the compiled main body has once every Call is inlined
    (undefined and recursive calls count nothing: compiling reports them)."""
    return _Sizer(model.subroutines).block(model.body)


def check_inlined_size(model: Model, limit: int = MAX_INSTRUCTIONS) -> None:
    """Raise :class:`ModelError` when inlining would create more than ``limit``
    instructions."""
    sizer = _Sizer(model.subroutines)
    total = sizer.block(model.body)
    if total > limit:
        raise ModelError(f"inlining subroutines would create {total} instructions (limit "
                         f"{limit}): {sizer.chain(model.body)}", model.source)


class _Sizer:
    def __init__(self, subroutines: Mapping[str, tuple]):
        self.subroutines = subroutines
        self.sizes: dict[str, int] = {}
        self.active: set[str] = set()

    def size(self, name: str) -> int:
        if name not in self.sizes:
            if name not in self.subroutines or name in self.active:
                return 0
            self.active.add(name)
            self.sizes[name] = self.block(self.subroutines[name])
            self.active.discard(name)
        return self.sizes[name]

    def block(self, statements) -> int:
        total = 0
        for stmt in statements:
            if isinstance(stmt, Call):
                total += self.size(stmt.name)
            elif isinstance(stmt, (Loop, Repeat)):
                total += 2 + self.block(stmt.body)
            elif isinstance(stmt, (Condition, Runon)):
                total += 1 + sum(1 + self.block(b.body) for b in stmt.branches)
            else:
                total += 1
        return total

    def calls(self, statements) -> dict[str, int]:
        """How often each subroutine is called directly in ``statements``."""
        counts: dict[str, int] = {}
        stack = list(statements)
        while stack:
            stmt = stack.pop()
            if isinstance(stmt, Call):
                counts[stmt.name] = counts.get(stmt.name, 0) + 1
            elif isinstance(stmt, (Loop, Repeat)):
                stack.extend(stmt.body)
            elif isinstance(stmt, (Condition, Runon)):
                stack.extend(s for b in stmt.branches for s in b.body)
        return counts

    def chain(self, body) -> str:
        """The path of calls that contributes most, as words."""
        steps, caller, seen = [], "main", set()
        while True:
            counts = {name: n for name, n in self.calls(body).items()
                      if name in self.subroutines and name not in seen}
            if not counts:
                break
            name = max(counts, key=lambda s: counts[s] * self.size(s))
            n = counts[name]
            steps.append(f"{caller} calls {name} ({n} time{'s' if n > 1 else ''})")
            seen.add(name)
            caller, body = name, self.subroutines[name]
        if len(steps) > 4:
            steps = steps[:3] + ["..." + " " + steps[-1]]
        return ", ".join(steps)
