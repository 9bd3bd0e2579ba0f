"""The two expression evaluators agree.

:meth:`pevpm.model.expr.Expr.evaluate` walks the parsed tree (the loader and
``pevpm show`` use it); :func:`pevpm.vm.kernel.program.compile_model` turns the same
tree into closures for the engine (constant parts folded, ``name op
number`` in one step).  For random expressions over ``procnum``,
``numprocs``, a loop index and a float parameter, both give the same value
of the same type, or both refuse with a :class:`ModelError`.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from pevpm.errors import ModelError
from pevpm.model.ast import Model, Serial
from pevpm.model.expr import Expr
from pevpm.vm.kernel.program import SERIAL, compile_model

BINARY = ("+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||")
FUNCTIONS_1 = ("abs", "floor", "ceil", "sqrt")
FUNCTIONS_2 = ("min", "max")

leaves = st.one_of(
    st.integers(-50, 50).map(str),
    st.floats(-100, 100, allow_nan=False).map(repr),
    st.sampled_from(["procnum", "numprocs", "i", "x", "MPI_ANY_SOURCE", "sizeof(double)"]),
)


def _combine(children):
    return st.one_of(
        st.tuples(children, st.sampled_from(BINARY), children).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"),
        children.map(lambda c: f"-({c})"),
        children.map(lambda c: f"!({c})"),
        st.tuples(children, children, children).map(lambda t: f"({t[0]} ? {t[1]} : {t[2]})"),
        st.tuples(st.sampled_from(FUNCTIONS_1), children).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(st.sampled_from(FUNCTIONS_2), children, children).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]})"),
    )


expressions = st.recursive(leaves, _combine, max_leaves=12)


def outcome(evaluate):
    try:
        value = evaluate()
    except ModelError:
        return ("refused",)
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    return (type(value).__name__ if not isinstance(value, bool) else "int", value)


@settings(max_examples=400, deadline=None)
@given(text=expressions, procnum=st.integers(0, 63), numprocs=st.integers(1, 64),
       i=st.integers(0, 9), x=st.floats(-10, 10, allow_nan=False))
def test_tree_walk_and_compiled_closures_agree(text, procnum, numprocs, i, x):
    expr = Expr.parse(text)
    env = {"procnum": procnum, "numprocs": numprocs, "i": i, "x": x}
    model = Model(body=(Serial(expr),), parameters={"x": x, "i": i})
    (instruction,) = compile_model(model).code
    assert instruction[0] == SERIAL
    compiled = instruction[1]
    assert outcome(lambda: compiled(env)) == outcome(lambda: expr.evaluate(env))
