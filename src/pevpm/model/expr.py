"""C-like expressions used in PEVPM models, parsed and evaluated safely.

Attribute values in directives (``size = xsize*sizeof(float)``,
``to = (procnum+1) % numprocs``, ``time = parameter t_iter``) are C
expressions over numbers, ``procnum``, ``numprocs``, model parameters and
program constants.  They are parsed into a small tree, never handed to
``eval``; evaluation follows C: ``/`` and ``%`` on two integers truncate
toward zero, comparisons and logical operators give 0 or 1.

>>> e = Expr.parse("(procnum + 1) % numprocs")
>>> e.evaluate({"procnum": 3, "numprocs": 4})
0
>>> Expr.parse("7 / 2").evaluate({}), Expr.parse("-7 % 3").evaluate({})
(3, -1)
>>> str(Expr.parse("xsize*sizeof(float)"))
'xsize * sizeof(float)'
>>> sorted(Expr.parse("parameter t + n").names())
['n', 't']

``uniform(a, b)``, ``exponential(mean)`` and ``gamma(mean, sd)`` draw from
the generator stored under :data:`RNG_NAME` (the virtual machine supplies
the run's own):

>>> import numpy as np
>>> 0 <= Expr.parse("uniform(0, 10)").evaluate({RNG_NAME: np.random.default_rng(1)}) < 10
True

Cartesian grids (:mod:`pevpm.model.cartesian`): ``dims_create(n, ndims, d)``,
``cart_coord(rank, n, ndims, d)`` and ``cart_shift(rank, n, ndims, d, disp, periodic)``
(``cart_shift_asc``: the grid's dimensions smallest first;
``cart_offset(rank, n, ndims, dx, dy, dz, periodic)``: a step along several at once):

>>> right = Expr.parse("cart_shift(procnum, numprocs, 2, 1, 1, 0)")  # a 3 x 2 grid
>>> right.evaluate({"procnum": 0, "numprocs": 6}), right.evaluate({"procnum": 1, "numprocs": 6})
(1, -1000003)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pevpm.errors import DirectiveError, ModelError, PevpmError, did_you_mean
from pevpm.model import cartesian
from pevpm.values import checked_number, parse_number

Number = int | float

#: MPI wildcard and null-process values as they appear in models.  They are
#: far from any rank arithmetic can produce by accident (``procnum - 1`` on
#: rank 0 is -1, which must be reported as an invalid rank, not as a wildcard).
ANY_SOURCE = -1_000_001
ANY_TAG = -1_000_002
PROC_NULL = cartesian.PROC_NULL

#: Names every rank's environment binds: its rank and the number of ranks.
RANK_NAMES = ("procnum", "numprocs")

BUILTIN_CONSTANTS: dict[str, Number] = {
    "MPI_ANY_SOURCE": ANY_SOURCE,
    "MPI_ANY_TAG": ANY_TAG,
    "MPI_PROC_NULL": PROC_NULL,
}

#: ``sizeof`` results for the usual LP64 C ABI.
C_TYPE_SIZES: dict[str, int] = {
    "char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "_Bool": 1,
    "short": 2, "unsigned short": 2,
    "int": 4, "unsigned": 4, "unsigned int": 4, "float": 4,
    "long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8,
    "double": 8, "long double": 16, "size_t": 8,
    "MPI_CHAR": 1, "MPI_BYTE": 1, "MPI_INT": 4, "MPI_FLOAT": 4,
    "MPI_LONG": 8, "MPI_DOUBLE": 8,
}

#: Environment key of the random generator that ``uniform``, ``exponential``
#: and ``gamma`` draw from (the virtual machine puts the run's generator there).
RNG_NAME = "__rng__"

def _finite_draw(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError(f"the draw is {value}, not a finite number (arguments out of range)")
    return value


def draw_plan(func: str, args) -> tuple[str, float, float]:
    """How the random function ``func`` draws with these arguments, checked once:
    ``("uniform", low, high)``, ``("exponential", mean, 0.0)``, ``("gamma",
    shape, scale)`` (numpy's parameters, which the compiled core hands to
    numpy's own C samplers on the same bit generator) or ``("constant",
    value, 0.0)`` for a gamma whose sd is 0; a :class:`ValueError` says why
    arguments are out of range.

    >>> draw_plan("gamma", (2.0, 1.0))
    ('gamma', 4.0, 0.5)
    >>> draw_plan("uniform", (1.0, 1e309))
    Traceback (most recent call last):
    ...
    ValueError: needs finite low <= high whose difference is finite
    >>> draw_plan("exponential", (-1,))
    Traceback (most recent call last):
    ...
    ValueError: needs a finite mean >= 0
    """
    if func == "uniform":
        low, high = args
        if not (math.isfinite(low) and math.isfinite(high) and low <= high
                and math.isfinite(high - low)):
            raise ValueError("needs finite low <= high whose difference is finite")
        return ("uniform", float(low), float(high))
    if func == "exponential":
        (mean,) = args
        if not (math.isfinite(mean) and mean >= 0):
            raise ValueError("needs a finite mean >= 0")
        return ("exponential", float(mean), 0.0)
    mean, sd = args
    if not (math.isfinite(mean) and math.isfinite(sd) and mean > 0 and sd >= 0):
        raise ValueError("needs finite mean > 0 and sd >= 0")
    if sd == 0:
        return ("constant", float(mean), 0.0)
    try:
        shape, scale = (mean / sd) ** 2, sd * sd / mean
    except OverflowError:
        shape = scale = math.inf
    if not (0 < shape < math.inf and 0 < scale < math.inf):
        raise ValueError("the mean and sd are too far apart for a gamma distribution")
    return ("gamma", float(shape), float(scale))


def draw(rng, plan: tuple[str, float, float]) -> float:
    """One number drawn from ``rng`` as :func:`draw_plan`'s ``plan`` says.

    >>> import numpy as np
    >>> draw(np.random.default_rng(0), ("constant", 5e-5, 0.0))
    5e-05
    >>> draws = [draw(np.random.default_rng(i), draw_plan("gamma", (5e-5, 2e-5)))
    ...          for i in range(4000)]
    >>> round(float(np.mean(draws)) * 1e6), round(float(np.std(draws)) * 1e6)
    (50, 20)
    """
    kind, a, b = plan
    if kind == "constant":
        return a
    if kind == "uniform":
        value = rng.uniform(a, b)
    elif kind == "exponential":
        value = rng.exponential(a)
    else:
        value = rng.gamma(a, b)
    return _finite_draw(float(value))


def _uniform(rng, low: float, high: float) -> float:
    """A uniform draw from [low, high); both finite, ``low <= high``."""
    return draw(rng, draw_plan("uniform", (low, high)))


def _exponential(rng, mean: float) -> float:
    """An exponential draw with this mean (finite, >= 0)."""
    return draw(rng, draw_plan("exponential", (mean,)))


def _gamma(rng, mean: float, sd: float) -> float:
    """A gamma draw with this mean and standard deviation (``mean`` itself when sd is 0):
    a serial segment's measured jitter, always positive, skewed to the right."""
    return draw(rng, draw_plan("gamma", (mean, sd)))


#: The quantile a random computation takes in the bound runs: the min bound
#: puts every ``exponential`` and ``gamma`` draw at its 0.1% point, the max
#: bound at its 99.9% point (the quantile a measured message time's maximum
#: takes too, :data:`pevpm.stats.distributions.DEFAULT_MAX_QUANTILE`);
#: ``uniform(a, b)`` gives ``a`` or ``b``.
BOUND_QUANTILES = {"min": 0.001, "max": 0.999}


class BoundDraws:
    """What a bound run puts under :data:`RNG_NAME` in place of its generator:
    every computation draw at its minimum (``"min"``) or maximum (``"max"``),
    so the bound runs bound the computation as well as the messages.  It
    answers the three draws the random functions make of a generator.

    >>> low, high = {RNG_NAME: BoundDraws("min")}, {RNG_NAME: BoundDraws("max")}
    >>> [Expr.parse("uniform(2, 5)").evaluate(env) for env in (low, high)]
    [2.0, 5.0]
    >>> [round(Expr.parse("gamma(1.0, 0.1)").evaluate(env), 4) for env in (low, high)]
    [0.7192, 1.3377]
    >>> Expr.parse("gamma(1.0, 0)").evaluate(high)   # no spread: the mean
    1.0
    """

    def __init__(self, which: str):
        if which not in BOUND_QUANTILES:
            raise ValueError(f"bound must be 'min' or 'max', got {which!r}")
        self.which = which
        self.quantile = BOUND_QUANTILES[which]

    def uniform(self, low: float, high: float) -> float:
        """``low`` at the minimum, ``high`` at the maximum."""
        return float(low if self.which == "min" else high)

    def exponential(self, mean: float) -> float:
        """The exponential distribution's bound quantile."""
        return float(-mean * math.log1p(-self.quantile))

    def gamma(self, shape: float, scale: float) -> float:
        """The gamma distribution's bound quantile."""
        from scipy.special import gammaincinv

        return float(gammaincinv(shape, self.quantile)) * scale


def call_text(func: str, args) -> str:
    """A function call as it reads in a model, for messages.

    >>> call_text("log2", [-1]), call_text("uniform", [0, 1.5])
    ('log2(-1)', 'uniform(0, 1.5)')
    """
    return f"{func}({', '.join(map(str, args))})"


#: Functions that draw a fresh random number at every evaluation.
RANDOM_FUNCTIONS: dict[str, tuple[int, Callable[..., Number]]] = {
    "uniform": (2, _uniform),
    "exponential": (1, _exponential),
    "gamma": (2, _gamma),
}

FUNCTIONS: dict[str, tuple[int, Callable[..., Number]]] = {
    "min": (2, min),
    "max": (2, max),
    "abs": (1, abs),
    "sqrt": (1, math.sqrt),
    "log2": (1, math.log2),
    "log": (1, math.log),
    "exp": (1, math.exp),
    "pow": (2, math.pow),
    "ceil": (1, math.ceil),
    "floor": (1, math.floor),
    "dims_create": (3, cartesian.dims_create),
    "cart_coord": (4, cartesian.cart_coord),
    "cart_shift": (6, cartesian.cart_shift),
    "cart_shift_asc": (6, cartesian.cart_shift_asc),
    "cart_offset": (7, cartesian.cart_offset),
    "xor": (2, cartesian.xor),
    **RANDOM_FUNCTIONS,
}


# --------------------------------------------------------------------------- tree


@dataclass(frozen=True)
class Num:
    value: Number


@dataclass(frozen=True)
class Name:
    id: str
    is_parameter: bool = False


@dataclass(frozen=True)
class Unary:
    op: str
    operand: Node


@dataclass(frozen=True)
class Binary:
    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Ternary:
    cond: Node
    if_true: Node
    if_false: Node


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple[Node, ...]


@dataclass(frozen=True)
class SizeOf:
    type_name: str


Node = Num | Name | Unary | Binary | Ternary | Call | SizeOf

# Binary operators by precedence, lowest first (C's order).
_BINARY_LEVELS: tuple[tuple[str, ...], ...] = (
    ("||",),
    ("&&",),
    ("==", "!="),
    ("<", "<=", ">", ">="),
    ("+", "-"),
    ("*", "/", "%"),
)
_PRECEDENCE = {op: level for level, ops in enumerate(_BINARY_LEVELS) for op in ops}
_TERNARY_PRECEDENCE = -1
_UNARY_PRECEDENCE = len(_BINARY_LEVELS)

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<num>0[xX][0-9a-fA-F]+|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)
      | (?P<name>[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*)
      | (?P<op>&&|\|\||==|!=|<=|>=|[-+*/%<>!()?:,])
    )""",
    re.VERBOSE,
)


# ------------------------------------------------------------------------- parser


class _Parser:
    def __init__(self, text: str, where: str | None):
        self.text = text
        self.where = where
        self.tokens = self._tokenise()
        self.pos = 0

    def _error(self, message: str, offset: int) -> DirectiveError:
        err = DirectiveError(message, where=self.where)
        err.offset = offset
        return err

    def _tokenise(self) -> list[tuple[str, str, int]]:
        tokens, i, text = [], 0, self.text
        end = len(text.rstrip())
        while i < end:
            m = _TOKEN.match(text, i)
            if not m or m.end() == i:
                j = _SPACE.match(text, i).end()
                raise self._error(f"unexpected character {text[j]!r} in expression", j)
            kind = m.lastgroup
            start = m.start(kind)
            tokens.append((kind, m.group(kind), start))
            i = m.end()
        tokens.append(("end", "", len(text)))
        return tokens

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.pos]

    def take(self) -> tuple[str, str, int]:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def expect(self, value: str) -> None:
        kind, text, offset = self.take()
        if text != value:
            found = "end of expression" if kind == "end" else repr(text)
            raise self._error(f"expected {value!r}, found {found}", offset)

    def parse(self) -> Node:
        if self.peek()[0] == "end":
            raise self._error("empty expression", 0)
        node = self.ternary()
        kind, text, offset = self.peek()
        if kind != "end":
            raise self._error(f"unexpected {text!r} after expression", offset)
        depth = _depth(node)
        if depth > MAX_DEPTH:
            raise self._error(f"expression nested too deeply ({depth} levels of operators; "
                              f"the limit is {MAX_DEPTH}): split a long sum with a constant "
                              "or a loop", 0)
        return node

    def ternary(self) -> Node:
        cond = self.binary(0)
        if self.peek()[1] == "?":
            self.take()
            if_true = self.ternary()
            self.expect(":")
            return Ternary(cond, if_true, self.ternary())
        return cond

    def binary(self, level: int) -> Node:
        if level == len(_BINARY_LEVELS):
            return self.unary()
        node = self.binary(level + 1)
        while self.peek()[0] == "op" and self.peek()[1] in _BINARY_LEVELS[level]:
            op = self.take()[1]
            node = Binary(op, node, self.binary(level + 1))
        return node

    def unary(self) -> Node:
        kind, text, _ = self.peek()
        if kind == "op" and text in "-+!":
            self.take()
            operand = self.unary()
            if text == "+":
                return operand
            if text == "-" and isinstance(operand, Num):
                return Num(-operand.value)
            return Unary(text, operand)
        return self.primary()

    def primary(self) -> Node:
        kind, text, offset = self.take()
        if kind == "num":
            try:
                return Num(parse_number(text))
            except PevpmError as exc:
                raise self._error(exc.message, offset) from None
        if kind == "op" and text == "(":
            node = self.ternary()
            self.expect(")")
            return node
        if kind == "name":
            if text == "parameter":
                kind2, name, offset2 = self.take()
                if kind2 != "name":
                    raise self._error("'parameter' must be followed by a name", offset2)
                return Name(name, is_parameter=True)
            if text == "sizeof":
                return self._sizeof()
            if self.peek()[1] == "(":
                return self._call(text, offset)
            return Name(text)
        found = "end of expression" if kind == "end" else repr(text)
        raise self._error(f"expected a value, found {found}", offset)

    def _sizeof(self) -> SizeOf:
        self.expect("(")
        words, offset = [], self.peek()[2]
        while self.peek()[0] == "name":
            words.append(self.take()[1])
        self.expect(")")
        type_name = " ".join(words)
        if type_name not in C_TYPE_SIZES:
            raise self._error(f"sizeof of unknown type {type_name!r}"
                              + did_you_mean(type_name, C_TYPE_SIZES), offset)
        return SizeOf(type_name)

    def _call(self, func: str, offset: int) -> Call:
        if func not in FUNCTIONS:
            raise self._error(f"unknown function {func!r}" + did_you_mean(func, FUNCTIONS), offset)
        self.expect("(")
        args = [self.ternary()]
        while self.peek()[1] == ",":
            self.take()
            args.append(self.ternary())
        self.expect(")")
        arity = FUNCTIONS[func][0]
        if len(args) != arity:
            raise self._error(f"{func}() takes {arity} argument(s), got {len(args)}", offset)
        return Call(func, tuple(args))


_SPACE = re.compile(r"\s*")

#: Deepest expression tree accepted (a chain of N binary operators is N deep);
#: evaluation recurses once per level and must stay within Python's stack.
MAX_DEPTH = 300


def _depth(root: Node) -> int:
    """Levels of ``root``, counted without recursion.

    >>> _depth(Expr.parse("1 + 2 * 3").tree)
    3
    """
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(node, Unary):
            children = (node.operand,)
        elif isinstance(node, Binary):
            children = (node.left, node.right)
        elif isinstance(node, Ternary):
            children = (node.cond, node.if_true, node.if_false)
        elif isinstance(node, Call):
            children = node.args
        else:
            children = ()
        stack.extend((child, depth + 1) for child in children)
    return deepest






# ---------------------------------------------------------------------- evaluation


def _c_divide(a: Number, b: Number) -> Number:
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


def _c_modulo(a: Number, b: Number) -> Number:
    if isinstance(a, int) and isinstance(b, int):
        return a - b * _c_divide(a, b)
    return math.fmod(a, b)


_BINARY_FUNCS: dict[str, Callable[[Number, Number], Number]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": _c_divide,
    "%": _c_modulo,
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b),
}


class Expr:
    """A parsed expression: evaluate it, list its names, print it back.

    Two expressions are equal when their trees are equal; printing gives
    canonical text that parses back to the same tree.
    """

    __slots__ = ("tree", "where")

    def __init__(self, tree: Node, where: str | None = None):
        self.tree = tree
        self.where = where

    @classmethod
    def parse(cls, text: str, where: str | None = None) -> Expr:
        """Parse C-like expression text; errors are DirectiveError with ``offset``."""
        return cls(_Parser(text, where).parse(), where)

    @classmethod
    def of(cls, value: Expr | Number | str) -> Expr:
        """Coerce a number, expression text or Expr into an Expr."""
        if isinstance(value, Expr):
            return value
        if isinstance(value, bool):
            return cls(Num(int(value)))
        if isinstance(value, (int, float)):
            try:
                return cls(Num(checked_number(value)))
            except PevpmError as exc:
                raise ModelError(exc.message) from None
        if isinstance(value, str):
            return cls.parse(value)
        raise ModelError(f"cannot use {value!r} as an expression")

    def names(self) -> frozenset[str]:
        """Free names the expression refers to (parameters included)."""
        found: set[str] = set()
        _collect_names(self.tree, found)
        return frozenset(found)

    def parameter_names(self) -> frozenset[str]:
        """Names the expression introduces with ``parameter NAME``.

        >>> sorted(Expr.parse("parameter t * n").parameter_names())
        ['t']
        """
        found: set[str] = set()
        _collect_names(self.tree, found, parameters_only=True)
        return frozenset(found)

    def is_constant(self) -> bool:
        """True when the value depends on nothing: no names, no random draws."""
        return not self.names() and not self.is_random()

    def is_random(self) -> bool:
        """True when evaluating draws random numbers (``uniform``, ``exponential``, ``gamma``)."""
        return _is_random(self.tree)

    def evaluate(self, env: Mapping[str, Number]) -> Number:
        """Value of the expression with names looked up in ``env``.

        Unknown names and division by zero raise :class:`ModelError` naming
        the expression's place.
        """
        return _evaluate(self.tree, env, self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expr) and self.tree == other.tree

    def __hash__(self) -> int:
        return hash(self.tree)

    def __str__(self) -> str:
        return _format(self.tree)

    def __repr__(self) -> str:
        return f"Expr({str(self)!r})"


def _is_random(node: Node) -> bool:
    if isinstance(node, Call):
        return node.func in RANDOM_FUNCTIONS or any(_is_random(a) for a in node.args)
    if isinstance(node, Unary):
        return _is_random(node.operand)
    if isinstance(node, Binary):
        return _is_random(node.left) or _is_random(node.right)
    if isinstance(node, Ternary):
        return any(_is_random(n) for n in (node.cond, node.if_true, node.if_false))
    return False


def _collect_names(node: Node, found: set[str], parameters_only: bool = False) -> None:
    if isinstance(node, Name):
        if node.id not in BUILTIN_CONSTANTS and (node.is_parameter or not parameters_only):
            found.add(node.id)
    elif isinstance(node, Unary):
        _collect_names(node.operand, found, parameters_only)
    elif isinstance(node, Binary):
        _collect_names(node.left, found, parameters_only)
        _collect_names(node.right, found, parameters_only)
    elif isinstance(node, Ternary):
        for child in (node.cond, node.if_true, node.if_false):
            _collect_names(child, found, parameters_only)
    elif isinstance(node, Call):
        for arg in node.args:
            _collect_names(arg, found, parameters_only)


def _evaluate(node: Node, env: Mapping[str, Number], expr: Expr) -> Number:
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Name):
        if node.id in env:
            return env[node.id]
        if node.id in BUILTIN_CONSTANTS:
            return BUILTIN_CONSTANTS[node.id]
        kind = "parameter" if node.is_parameter else "name"
        raise ModelError(f"unknown {kind} {node.id!r}" + did_you_mean(node.id, env)
                         + (" (supply it with -D NAME=VALUE)" if node.is_parameter else ""),
                         where=expr.where)
    if isinstance(node, Binary):
        left = _evaluate(node.left, env, expr)
        if node.op == "&&":
            return int(bool(left) and bool(_evaluate(node.right, env, expr)))
        if node.op == "||":
            return int(bool(left) or bool(_evaluate(node.right, env, expr)))
        right = _evaluate(node.right, env, expr)
        if node.op in "/%" and right == 0:
            raise ModelError(f"division by zero in '{expr}'", where=expr.where)
        try:
            return _BINARY_FUNCS[node.op](left, right)
        except (ValueError, OverflowError) as exc:
            raise ModelError(f"'{expr}' is undefined: {exc}", where=expr.where) from None
    if isinstance(node, Unary):
        value = _evaluate(node.operand, env, expr)
        return -value if node.op == "-" else int(not value)
    if isinstance(node, Ternary):
        branch = node.if_true if _evaluate(node.cond, env, expr) else node.if_false
        return _evaluate(branch, env, expr)
    if isinstance(node, Call):
        args = [_evaluate(a, env, expr) for a in node.args]
        if node.func in RANDOM_FUNCTIONS:
            if RNG_NAME not in env:
                raise ModelError(f"{node.func}() draws a random number; only the virtual "
                                 "machine can evaluate it", where=expr.where)
            args.insert(0, env[RNG_NAME])
        try:
            return FUNCTIONS[node.func][1](*args)
        except (ValueError, OverflowError) as exc:
            shown = args[1:] if node.func in RANDOM_FUNCTIONS else args
            raise ModelError(f"{call_text(node.func, shown)} is undefined: {exc}",
                             where=expr.where) from None
    return C_TYPE_SIZES[node.type_name]


def _precedence(node: Node) -> int:
    if isinstance(node, Binary):
        return _PRECEDENCE[node.op]
    if isinstance(node, Ternary):
        return _TERNARY_PRECEDENCE
    if isinstance(node, Num) and node.value < 0:
        return _UNARY_PRECEDENCE
    return _UNARY_PRECEDENCE + 1


def _format(node: Node) -> str:
    if isinstance(node, Num):
        return repr(node.value)
    if isinstance(node, Name):
        return f"parameter {node.id}" if node.is_parameter else node.id
    if isinstance(node, SizeOf):
        return f"sizeof({node.type_name})"
    if isinstance(node, Call):
        return f"{node.func}({', '.join(_format(a) for a in node.args)})"
    if isinstance(node, Unary):
        inner = _format(node.operand)
        if _precedence(node.operand) < _UNARY_PRECEDENCE + 1:
            inner = f"({inner})"
        return f"{node.op}{inner}"
    if isinstance(node, Binary):
        level = _PRECEDENCE[node.op]
        left, right = _format(node.left), _format(node.right)
        if _precedence(node.left) < level:
            left = f"({left})"
        if _precedence(node.right) <= level:
            right = f"({right})"
        return f"{left} {node.op} {right}"
    cond, a, b = _format(node.cond), _format(node.if_true), _format(node.if_false)
    if _precedence(node.cond) <= _TERNARY_PRECEDENCE:
        cond = f"({cond})"
    return f"{cond} ? {a} : {b}"
