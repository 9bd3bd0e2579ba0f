"""Expressions as flat postfix operations the compiled core evaluates in C.

An operand that changes during a run (it reads a loop index or a receive
status) stays a Python closure (:mod:`pevpm.vm.kernel.program`); :func:`postfix`
also writes it, where it can, as a tuple of operations that
:mod:`pevpm.vm.kernel.fastcore` runs on a small stack of C integers and doubles
with Python's arithmetic (C division and modulo as the model language
defines them).  The core falls back to the closure whenever the C
evaluation cannot promise the closure's exact value: an integer beyond 64
bits, an integer beyond 2**53 meeting a float, a division by zero, a name
missing from the environment or holding something other than a number, a
value that is not finite.  The closure then gives the value or the error,
so the C form only makes the common case fast.

The operations (a tuple each):

================  ===========================================================
``("num", v)``    push the int or float ``v``
``("name", n)``   push ``env[n]``
``("neg",)``      negate; ``("not",)``: 1 if zero, else 0
``("bin", op)``   ``+ - * / % == != < <= > >= && ||`` on the two on top
``("pick",)``     ``c ? a : b`` from the three on top
``("min",)``      Python's ``min`` / ``max`` of the two on top: ``("max",)``
``("draw", f)``   last only: ``uniform``, ``exponential`` or ``gamma`` of the
                  arguments on the stack, from the run's bit generator
================  ===========================================================

>>> from pevpm.model.expr import Expr
>>> postfix(Expr.parse("(i + 1) % n"))
(('name', 'i'), ('num', 1), ('bin', '+'), ('name', 'n'), ('bin', '%'))
>>> postfix(Expr.parse("gamma(t * (1 + i), sd)"))[-1]
('draw', 'gamma')
>>> postfix(Expr.parse("sqrt(i)")) is None     # not written in C: the closure runs
True
"""

from __future__ import annotations

from pevpm.errors import ModelError
from pevpm.model import expr as ex

#: Binary operators the core evaluates.
BINARY = ("+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||")
#: Functions of two arguments the core evaluates (Python's min and max).
PAIRS = ("min", "max")


class _NotInC(Exception):
    """The expression has a part the core does not evaluate."""


def postfix(e: ex.Expr) -> tuple[tuple, ...] | None:
    """``e`` as postfix operations, or None when some part of it is not written
    in C (other functions, a random draw that is not the whole expression)."""
    node = e.tree
    try:
        if isinstance(node, ex.Call) and node.func in ex.RANDOM_FUNCTIONS:
            if any(ex.Expr(arg).is_random() for arg in node.args):
                return None
            return tuple(op for arg in node.args for op in _ops(arg)) + (("draw", node.func),)
        if e.is_random():
            return None
        return tuple(_ops(node))
    except _NotInC:
        return None


def _ops(node) -> list[tuple]:
    if isinstance(node, ex.Num):
        return [_number(node.value)]
    if ex.Expr(node).is_constant():     # as the closures fold constant parts
        try:
            return [_number(ex.Expr(node).evaluate({}))]
        except ModelError:
            raise _NotInC from None     # e.g. 1/0: the closure reports it when it runs
    if isinstance(node, ex.SizeOf):
        return [_number(ex.C_TYPE_SIZES[node.type_name])]
    if isinstance(node, ex.Name):
        return [("name", node.id)]       # builtin constants are folded above
    if isinstance(node, ex.Unary):
        return _ops(node.operand) + [("neg",) if node.op == "-" else ("not",)]
    if isinstance(node, ex.Ternary):
        return _ops(node.cond) + _ops(node.if_true) + _ops(node.if_false) + [("pick",)]
    if isinstance(node, ex.Call) and node.func in PAIRS:
        return _ops(node.args[0]) + _ops(node.args[1]) + [(node.func,)]
    if isinstance(node, ex.Binary) and node.op in BINARY:
        return _ops(node.left) + _ops(node.right) + [("bin", node.op)]
    raise _NotInC


def _number(value) -> tuple:
    if type(value) is int and -2**63 < value < 2**63:
        return ("num", value)
    if type(value) is float:
        return ("num", value)
    raise _NotInC
