"""Program constants picked up from annotated source, for use in directives.

A directive may say ``size = xsize*sizeof(float)`` because the program says
``int xsize = 256;``.  Constants are found by pattern, not by compiling:

* C and C++: ``#define N 64`` and declarations with an initialiser
  (``int xsize = 256;``, ``const double dt = 1e-3, t = 2*dt;``);
* Fortran: ``integer, parameter :: n = 64`` and ``parameter (n = 64)``;
* Python: module-level ``N = 64`` (and ``N: int = 64``).

Only values that evaluate to a number from literals and earlier constants
are kept (``int ysize = 256/numprocs+2;`` is not a constant).  When a name
is declared more than once, the first declaration wins.

>>> find_constants("#define N 64\\nint xsize = 4*N, k;\\nfloat f = 1.5f;", "c")
{'N': 64, 'xsize': 256, 'f': 1.5}
>>> find_constants("integer, parameter :: n = 8\\nreal(8), parameter :: h = 1.0d-2", "fortran")
{'n': 8, 'h': 0.01}
>>> find_constants("N = 2 ** 8\\nrate = N / 4\\ndef f():\\n    M = 3", "python")
{'N': 256, 'rate': 64.0}
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable

from pevpm.errors import PevpmError
from pevpm.model.expr import Expr, Number

_C_TYPE_WORDS = ("const", "constexpr", "static", "volatile", "register", "unsigned", "signed",
                 "long", "short", "int", "float", "double", "char", "bool", "size_t",
                 "int32_t", "int64_t", "uint32_t", "uint64_t")
_C_DECLARATION = re.compile(r"\s*(?:(?:" + "|".join(_C_TYPE_WORDS)
                            + r")\s+)+(?P<declarators>.*)\Z", re.DOTALL)
_C_DEFINE = re.compile(r"^\s*#\s*define\s+(?P<name>[A-Za-z_]\w*)(?P<rest>[^\n]*)", re.MULTILINE)
_C_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_C_NUMBER_SUFFIX = re.compile(r"\b((?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+"
                              r"(?:[eE][+-]?\d+)?))[uUlLfF]+\b")
_DECLARATOR = re.compile(r"\s*(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<value>.+?)\s*\Z", re.DOTALL)

_FORTRAN_TYPED = re.compile(r"^[^!\n]*\bparameter\b[^:!\n]*::(?P<declarators>[^!\n]*)",
                            re.IGNORECASE | re.MULTILINE)
_FORTRAN_STATEMENT = re.compile(r"^\s*parameter\s*\((?P<declarators>[^!\n]*)\)",
                                re.IGNORECASE | re.MULTILINE)
_FORTRAN_NUMBER = re.compile(r"\b(\d+\.?\d*|\.\d+)[dD]([+-]?\d+)")
_FORTRAN_KIND = re.compile(r"(\d|\.)_\w+")


def find_constants(text: str, language: str) -> dict[str, Number]:
    """Numeric constants declared in ``text`` (``c``, ``fortran`` or ``python``)."""
    finder = {"c": _c_constants, "fortran": _fortran_constants, "python": _python_constants}
    return finder[language](text)


# ---------------------------------------------------------------------------- C


def _c_constants(text: str) -> dict[str, Number]:
    code = _C_COMMENTS.sub(" ", text)
    found: dict[str, Number] = {}
    events = [(m.start(), "define", m) for m in _C_DEFINE.finditer(code)]
    without_directives = re.sub(r"^\s*#[^\n]*", lambda m: " " * len(m.group()), code,
                                flags=re.MULTILINE)
    start = 0
    for m in re.finditer(r"[;{}]", without_directives):
        events.append((start, "statement", without_directives[start:m.start()]))
        start = m.end()
    for _, kind, item in sorted(events, key=lambda e: e[0]):
        if kind == "define":
            _add(found, item.group("name"), _c_literals(item.group("rest")))
            continue
        decl = _C_DECLARATION.match(item)
        if decl:
            for declarator in split_top_level(decl.group("declarators")):
                d = _DECLARATOR.match(declarator)
                if d:
                    _add(found, d.group("name"), _c_literals(d.group("value")))
    return found


def _c_literals(value: str) -> str:
    return _C_NUMBER_SUFFIX.sub(r"\1", value.strip())


# ---------------------------------------------------------------------- Fortran


def _fortran_constants(text: str) -> dict[str, Number]:
    found: dict[str, Number] = {}
    matches = sorted(list(_FORTRAN_TYPED.finditer(text)) + list(_FORTRAN_STATEMENT.finditer(text)),
                     key=lambda m: m.start())
    for m in matches:
        for declarator in split_top_level(m.group("declarators")):
            d = _DECLARATOR.match(declarator)
            if d:
                value = _FORTRAN_NUMBER.sub(r"\1e\2", d.group("value"))
                _add(found, d.group("name"), _FORTRAN_KIND.sub(r"\1", value))
    return found


# ----------------------------------------------------------------------- Python

_PY_BINARY: dict[type, Callable[[Number, Number], Number]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


def _python_constants(text: str) -> dict[str, Number]:
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    found: dict[str, Number] = {}
    for node in module.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        try:
            number = _python_value(value, found)
        except (ArithmeticError, ValueError, TypeError, KeyError, RecursionError):
            continue
        for target in targets:
            if isinstance(target, ast.Name) and target.id not in found:
                found[target.id] = number
    return found


def _python_value(node: ast.AST, known: dict[str, Number]) -> Number:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name):
        return known[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _python_value(node.operand, known)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _PY_BINARY:
        left, right = _python_value(node.left, known), _python_value(node.right, known)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ValueError("exponent too large for a constant")
        return _PY_BINARY[type(node.op)](left, right)
    raise ValueError("not a numeric constant")


# ----------------------------------------------------------------------- common


def _add(found: dict[str, Number], name: str, text: str) -> None:
    """Record ``name`` when ``text`` evaluates to a number from earlier constants."""
    if name in found or not text:
        return
    try:
        found[name] = Expr.parse(text).evaluate(found)
    except (PevpmError, ArithmeticError, ValueError, RecursionError):
        pass


def split_top_level(text: str) -> list[str]:
    """``text`` split at commas outside brackets.

    >>> split_top_level("a = f(1, 2), b[3, 4], c")
    ['a = f(1, 2)', ' b[3, 4]', ' c']
    """
    pieces, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    return pieces
