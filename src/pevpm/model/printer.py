"""Print a :class:`~pevpm.model.ast.Model` as directives, or as a tree for reading.

:func:`to_directives` writes annotated-source text (constants as the
language declares them, then ``PEVPM`` directives) that
:func:`~pevpm.model.directives.parse_directives` reads back to an equal
model.  :func:`format_tree` is what ``pevpm show`` prints.

>>> from pevpm.model.builder import ModelBuilder
>>> from pevpm.model.directives import parse_directives
>>> b = ModelBuilder(constants={"n": 64})
>>> with b.loop(10):
...     b.send("n * sizeof(double)", dest="(procnum + 1) % numprocs")
...     b.serial("0.5 / numprocs")
>>> text = to_directives(b.build())
>>> print(text, end="")
#define n 64
// PEVPM Loop iterations = 10
// PEVPM {
// PEVPM   Message type = MPI_Send
// PEVPM   &       size = n * sizeof(double)
// PEVPM   &       from = procnum
// PEVPM   &       to = (procnum + 1) % numprocs
// PEVPM   Serial time = 0.5 / numprocs
// PEVPM }
>>> parse_directives(text) == b.build()
True
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pevpm.errors import ModelError, PevpmError
from pevpm.model.ast import (
    COLLECTIVES,
    Branch,
    Call,
    Condition,
    Defaults,
    Loop,
    Message,
    Model,
    Repeat,
    Runon,
    Serial,
    Statement,
)
from pevpm.model.expr import Expr, Number
from pevpm.model.source import COMMENT_MARKERS

_UNIT_AMBIGUOUS = re.compile(r".*\S\s+(s|ms|us|ns)\Z")
_RANK_LITERAL = re.compile(r"\d+\Z")


# ------------------------------------------------------------------ directives


def to_directives(model: Model, language: str = "c") -> str:
    """Annotated-source text for ``model`` in ``language`` (``c``, ``fortran``, ``python``).

    Times are written in seconds, the model's own unit.
    """
    marker = COMMENT_MARKERS[language] + " PEVPM "
    lines = [_declare_constant(name, value, language)
             for name, value in model.constants.items()]
    lines += [marker + text for text in _directive_lines(model)]
    return "\n".join(lines) + "\n"


def _declare_constant(name: str, value: Number, language: str) -> str:
    if language == "c":
        return f"#define {name} {value!r}"
    if language == "python":
        return f"{name} = {value!r}"
    kind = "integer" if isinstance(value, int) else "double precision"
    return f"{kind}, parameter :: {name} = {value!r}"


def _directive_lines(model: Model) -> Iterator[str]:
    for proc in model.processors.values():
        yield from _directive("Processor", [("description", proc.name),
                                            ("timing basis", repr(proc.timing_basis))])
    for net in model.networks.values():
        yield from _directive("Network", [("description", net.name)] + [
            (f"link {link.name}", f"{link.src} {link.dst} {link.profile}")
            for link in net.links])
    defaults = _default_attributes(model.defaults)
    if defaults:
        yield from _directive("Default", defaults)
    if model.parameters:
        yield from _directive("Parameter", [(k, repr(v)) for k, v in model.parameters.items()])
    for name, body in model.subroutines.items():
        yield from _directive("Subroutine", [("name", name)])
        yield from _block(body, 0)
    yield from _statements(model.body, 0)


def _default_attributes(d: Defaults) -> list[tuple[str, str]]:
    attrs = []
    if d.processor is not None:
        attrs.append(("processor", d.processor))
    if d.numprocs is not None:
        attrs.append(("numprocs", repr(d.numprocs)))
    if d.speed is not None:
        attrs.append(("speed", repr(d.speed)))
    attrs += [(f"speed_{i}", repr(s)) for i, s in sorted(d.speeds.items())]
    if d.network is not None:
        attrs.append(("network", d.network))
    return attrs


def _directive(keyword: str, attrs: list[tuple[str, str]], depth: int = 0,
               head: str = "") -> Iterator[str]:
    pad = "  " * depth
    first, *rest = attrs
    yield f"{pad}{keyword} {head}{first[0]} = {first[1]}"
    for name, value in rest:
        yield f"{pad}&{' ' * (len(keyword) - 1)} {name} = {value}"


def _block(body: tuple[Statement, ...], depth: int) -> Iterator[str]:
    pad = "  " * depth
    yield pad + "{"
    yield from _statements(body, depth + 1)
    yield pad + "}"


def _statements(body: tuple[Statement, ...], depth: int) -> Iterator[str]:
    for stmt in body:
        yield from _statement(stmt, depth)


def _statement(stmt: Statement, depth: int) -> Iterator[str]:
    if isinstance(stmt, Serial):
        time = str(stmt.time)
        if _UNIT_AMBIGUOUS.match(time):
            time += " s"
        head = f"on {stmt.on} " if stmt.on else ""
        attrs = [("time", time)] + ([("kind", "sleep")] if stmt.sleep else [])
        yield from _directive("Serial", attrs, depth, head)
    elif isinstance(stmt, Message):
        yield from _directive("Message", _message_attributes(stmt), depth)
    elif isinstance(stmt, Loop):
        attrs = [("iterations", str(stmt.count))]
        if stmt.index:
            attrs.append(("index", stmt.index))
        yield from _directive("Loop", attrs, depth)
        yield from _block(stmt.body, depth)
    elif isinstance(stmt, Repeat):
        attrs = [("until", str(stmt.until)), ("max", str(stmt.cap))]
        if stmt.index:
            attrs.append(("index", stmt.index))
        yield from _directive("Repeat", attrs, depth)
        yield from _block(stmt.body, depth)
    elif isinstance(stmt, (Condition, Runon)):
        keyword = type(stmt).__name__
        if not stmt.branches:
            raise ModelError(f"a {keyword} without arms cannot be written as directives")
        for i, branch in enumerate(stmt.branches):
            guard = _guard_text(branch, isinstance(stmt, Runon))
            if i == 0:
                yield from _directive(keyword, [(branch.name, guard)], depth)
            else:
                yield f"{'  ' * depth}&{' ' * (len(keyword) - 1)} {branch.name} = {guard}"
            yield from _block(branch.body, depth)
    elif isinstance(stmt, Call):
        yield from _directive("Call", [("name", stmt.name)], depth)
    else:
        raise ModelError(f"cannot write {type(stmt).__name__} as a directive")


def _guard_text(branch: Branch, is_runon: bool) -> str:
    text = str(branch.guard)
    # A bare number in a Runon means a rank; keep a constant predicate an expression.
    return f"({text})" if is_runon and _RANK_LITERAL.match(text) else text


def _message_attributes(m: Message) -> list[tuple[str, str]]:
    attrs = [("type", m.op), ("size", str(m.size))]
    if m.op not in COLLECTIVES:
        attrs += [(name, str(v)) for name, v in (("from", m.src), ("to", m.dst)) if v is not None]
    attrs += [(name, str(v)) for name, v in (("tag", m.tag), ("root", m.root),
                                              ("recv_size", m.recv_size)) if v is not None]
    if m.op == "MPI_Waitall":
        if m.requests:
            attrs.append(("req", ", ".join(m.requests)))
    elif m.request:
        attrs.append(("req", m.request))
    return attrs


# ------------------------------------------------------------------------ tree


def format_tree(model: Model) -> str:
    """An indented, human-readable outline of ``model`` (``pevpm show``).

    Values that the constants and parameter values determine are shown
    evaluated too (``size xsize * sizeof(float) = 1024``), Condition arms
    with their probabilities when all weights are known.
    """
    out = [f"model {model.source or '<built in Python>'}"]
    if model.constants:
        out.append("constants: " + ", ".join(f"{k} = {v!r}" for k, v in model.constants.items()))
    if model.parameters:
        out.append("parameters: " + ", ".join(f"{k} = {v!r}"
                                              for k, v in model.parameters.items()))
    for proc in model.processors.values():
        out.append(f"processor {proc.name}: timing basis {proc.timing_basis:g} MHz")
    for net in model.networks.values():
        out.append(f"network {net.name}: " + (", ".join(
            f"{link.name} {link.src} -> {link.dst} ({link.profile})" for link in net.links)
            or "no links"))
    defaults = _default_attributes(model.defaults)
    if defaults:
        out.append("defaults: " + ", ".join(f"{k} = {v}" for k, v in defaults))
    tree = _Tree({**model.constants, **model.parameters})
    for name, body in model.subroutines.items():
        out.append(f"subroutine {name}:")
        out += tree.lines(body, 1)
    out.append("main:")
    out += tree.lines(model.body, 1)
    return "\n".join(out)


class _Tree:
    def __init__(self, known: dict[str, Number]):
        self.known = known

    def value(self, expr: Expr) -> Number | None:
        if not expr.names() <= set(self.known):
            return None
        try:
            return expr.evaluate(self.known)
        except (PevpmError, ArithmeticError, ValueError):
            return None

    def show(self, expr: Expr, unit: str = "") -> str:
        value = self.value(expr)
        if value is None:
            return f"{expr}{unit}"
        text = f"{value:g}" if isinstance(value, float) else str(value)
        return f"{text}{unit}" if text == str(expr) else f"{expr} = {text}{unit}"

    def lines(self, body: tuple[Statement, ...], depth: int) -> list[str]:
        out = []
        for stmt in body:
            pad = "  " * depth
            where = f"  [line {stmt.loc.line}]" if stmt.loc else ""
            if isinstance(stmt, Serial):
                on = f" on {stmt.on}" if stmt.on else ""
                sleep = " (sleep)" if stmt.sleep else ""
                out.append(f"{pad}Serial{on}: {self.show(stmt.time, ' s')}{sleep}{where}")
            elif isinstance(stmt, Message):
                out.append(f"{pad}{stmt.op}: {self.message(stmt)}{where}")
            elif isinstance(stmt, Loop):
                index = f" (index {stmt.index})" if stmt.index else ""
                out.append(f"{pad}Loop {self.show(stmt.count)} times{index}{where}")
                out += self.lines(stmt.body, depth + 1)
            elif isinstance(stmt, Repeat):
                index = f" (index {stmt.index})" if stmt.index else ""
                out.append(f"{pad}Repeat until {stmt.until}, at most {self.show(stmt.cap)} "
                           f"passes{index}{where}")
                out += self.lines(stmt.body, depth + 1)
            elif isinstance(stmt, Condition):
                out.append(f"{pad}Condition{where}")
                weights = [self.value(b.guard) for b in stmt.branches]
                total = sum(w for w in weights if w is not None)
                for branch, weight in zip(stmt.branches, weights):
                    p = (f" (p = {weight / total:.3g})"
                         if None not in weights and total > 0 else "")
                    out.append(f"{pad}  {branch.name} weight {branch.guard}{p}")
                    out += self.lines(branch.body, depth + 2)
            elif isinstance(stmt, Runon):
                out.append(f"{pad}Runon{where}")
                for branch in stmt.branches:
                    out.append(f"{pad}  {branch.name} when {branch.guard}")
                    out += self.lines(branch.body, depth + 2)
            else:
                out.append(f"{pad}Call {stmt.name}{where}")
        return out

    def message(self, m: Message) -> str:
        parts = [f"size {self.show(m.size)}"]
        parts += [f"{name} {self.show(v)}" for name, v in
                  (("from", m.src), ("to", m.dst), ("tag", m.tag), ("root", m.root),
                   ("recv_size", m.recv_size)) if v is not None]
        requests = m.requests if m.op == "MPI_Waitall" else (m.request,) if m.request else ()
        if requests:
            parts.append("req " + ", ".join(requests))
        return ", ".join(parts)
