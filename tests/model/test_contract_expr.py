"""The C-like expression language: C arithmetic, errors, canonical printing."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pevpm.errors import DirectiveError, ModelError
from pevpm.model.expr import ANY_SOURCE, Expr


@pytest.mark.parametrize("text, value", [
    ("7 / 2", 3), ("-7 / 2", -3), ("7 / -2", -3), ("7.0 / 2", 3.5),
    ("-7 % 3", -1), ("7 % -3", 1), ("2 + 3 * 4", 14), ("(2 + 3) * 4", 20),
    ("1 < 2 && 2 < 1", 0), ("1 < 2 || 2 < 1", 1), ("!0", 1), ("!5", 0),
    ("3 == 3", 1), ("3 != 3", 0), ("1 ? 10 : 20", 10), ("0 ? 10 : 1 ? 30 : 40", 30),
    ("256 * sizeof(float)", 1024), ("sizeof(double)", 8), ("sizeof(unsigned long)", 8),
    ("0x10", 16), ("1e3", 1000.0), ("max(3, 9) - min(3, 9)", 6), ("ceil(log2(5))", 3),
    ("MPI_ANY_SOURCE", ANY_SOURCE),
])
def test_c_semantics(text, value):
    result = Expr.parse(text).evaluate({})
    assert result == value and type(result) is type(value)


def test_names_and_environment():
    e = Expr.parse("(procnum + 1) % numprocs * parameter width")
    assert e.names() == {"procnum", "numprocs", "width"}
    assert e.evaluate({"procnum": 3, "numprocs": 4, "width": 8}) == 0


def test_short_circuit_skips_division_by_zero():
    assert Expr.parse("0 && 1 / 0").evaluate({}) == 0


@pytest.mark.parametrize("text, message, offset", [
    ("", "empty expression", 0),
    ("1 +", "expected a value, found end of expression", 3),
    ("(1 + 2", "expected ')', found end of expression", 6),
    ("1 2", "unexpected '2' after expression", 2),
    ("a $ b", "unexpected character '$' in expression", 2),
    ("sizeof(flaot)", "sizeof of unknown type 'flaot' (did you mean 'float'?)", 7),
    ("mx(1, 2)", "unknown function 'mx' (did you mean 'max'?)", 0),
    ("min(1)", "min() takes 2 argument(s), got 1", 0),
    ("parameter 3", "'parameter' must be followed by a name", 10),
])
def test_syntax_errors_name_the_column(text, message, offset):
    with pytest.raises(DirectiveError) as info:
        Expr.parse(text, where="m.c:4:9")
    assert str(info.value) == f"m.c:4:9: {message}"
    assert info.value.offset == offset


def test_unknown_name_suggests_close_match():
    with pytest.raises(ModelError, match=r"unknown name 'xsiz' \(did you mean 'xsize'\?\)"):
        Expr.parse("xsiz * 4", where="j.c:3:1").evaluate({"xsize": 256, "procnum": 0})


def test_division_by_zero_is_a_model_error():
    with pytest.raises(ModelError, match=re.escape("division by zero in '4 / (numprocs - 1)'")):
        Expr.parse("4 / (numprocs - 1)").evaluate({"numprocs": 1})


_leaves = st.one_of(st.integers(-50, 50).map(str), st.sampled_from(["a", "b", "procnum"]))


def _combine(children):
    binary = st.tuples(children, st.sampled_from(
        ["+", "-", "*", "/", "%", "<", "==", "&&", "||", "!="]), children).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})")
    unary = st.tuples(st.sampled_from(["-", "!"]), children).map(lambda t: f"{t[0]}({t[1]})")
    ternary = st.tuples(children, children, children).map(lambda t: f"({t[0]} ? {t[1]} : {t[2]})")
    return st.one_of(binary, unary, ternary)


@given(st.recursive(_leaves, _combine, max_leaves=12))
def test_printing_round_trips(text):
    expr = Expr.parse(text)
    assert Expr.parse(str(expr)) == expr
