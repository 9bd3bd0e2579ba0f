"""Trees of point-to-point messages in a trace, recognised and written so
that they hold at any rank count.

MPI libraries and mpi4py build some collectives from point-to-point
messages: mpi4py's ``comm.reduce`` and ``comm.allreduce`` of Python objects
send pickles up a binomial tree (a length message, then the pickle), its
``comm.scan`` exchanges them by recursive doubling; C programs write their
own binomial reductions and broadcasts.  Each rank's part depends on the
bits of its rank, so no single peer expression or rank condition of
:mod:`pevpm.trace.extract.peers` describes it, and a model extracted without
knowing the tree stalls at rank counts it was not traced at.

Each :class:`Template` is such a tree over ``ceil(log2(numprocs))`` steps
(ascending, or descending for broadcasts): at step ``s`` a rank's partner
is ``xor(procnum, 2^s)`` and the first of the template's arms whose guard
holds says whether it sends, receives or exchanges (or, when none holds,
sits the step out).  The same guards that compute the expected messages
here are written into the model (:func:`model_lines`), so what was matched
is what runs.  :func:`find_trees` finds, in every rank's token stream, the
runs of blocking messages that follow a template step by step with
``unit`` messages per step (mpi4py: 2) and replaces each by one tree token,
the same on every rank, so the ranks merge as usual.

>>> MPI4PY_REDUCE.steps(8, 5)
[('send', 4), ('recv', 7), ('send', 1)]
>>> BINOMIAL_REDUCE.steps(8, 5), BINOMIAL_BCAST.steps(8, 0)
([('send', 4)], [('send', 4), ('send', 2), ('send', 1)])
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import cache

from pevpm.model.expr import Expr
from pevpm.trace.extract.tokens import (
    DST,
    OP,
    REQ,
    SERIAL,
    SIZE,
    SRC,
    TAG,
    Token,
    is_computation,
    is_message,
)

#: The loop count of every tree: one step per bit of the largest rank.
STEPS = "ceil(log2(numprocs))"

#: The partner at a step (``{s}``: the step's bit).
PARTNER = "xor(procnum, pow(2, {s}))"

#: Each action's blocking operation.
OPS = {"send": "MPI_Send", "recv": "MPI_Recv", "sendrecv": "MPI_Sendrecv"}


@dataclass(frozen=True)
class Template:
    """A tree: ``arms`` are (guard over ``procnum``, ``numprocs`` and the step's
    bit ``{s}``, action); ``descending``: the steps run from the highest bit down."""

    name: str
    title: str
    arms: tuple[tuple[str, str], ...]
    descending: bool = False

    def bit(self, index: str) -> str:
        """The step's bit as an expression of the loop index ``index``."""
        return f"({STEPS} - 1 - {index})" if self.descending else index

    def steps(self, numprocs: int, rank: int) -> list[tuple[str, int]]:
        """(action, partner) of every step rank ``rank`` of ``numprocs`` takes part in."""
        out = []
        count = max(numprocs - 1, 0).bit_length()
        for step in range(count):
            bit = count - 1 - step if self.descending else step
            env = {"procnum": rank, "numprocs": numprocs, "s": bit}
            for guard, action in self.arms:
                if _parsed(guard.format(s="s")).evaluate(env):
                    out.append((action, rank ^ (1 << bit)))
                    break
        return out


_BIT_SET = "floor(procnum / pow(2, {s})) % 2 == 1"
_LOW_CLEAR = "procnum % pow(2, {s}) == 0"
_PARTNER_EXISTS = PARTNER + " < numprocs"

MPI4PY_REDUCE = Template(
    "mpi4py-reduce",
    "binomial reduction to rank 0 in which a rank that has sent keeps sending its own "
    "value (mpi4py's comm.reduce / comm.allreduce of Python objects)",
    ((_BIT_SET, "send"), (_PARTNER_EXISTS, "recv")))
BINOMIAL_REDUCE = Template(
    "binomial-reduce", "binomial reduction to rank 0 (each rank sends once)",
    ((f"{_LOW_CLEAR} && {_BIT_SET}", "send"), (f"{_LOW_CLEAR} && {_PARTNER_EXISTS}", "recv")))
BINOMIAL_BCAST = Template(
    "binomial-bcast", "binomial broadcast from rank 0 (each rank receives once)",
    (("procnum % pow(2, {s} + 1) == pow(2, {s})", "recv"),
     ("procnum % pow(2, {s} + 1) == 0 && " + _PARTNER_EXISTS, "send")), descending=True)
RECURSIVE_DOUBLING = Template(
    "recursive-doubling",
    "recursive-doubling exchange (mpi4py's comm.scan / comm.exscan of Python objects)",
    ((_PARTNER_EXISTS, "sendrecv"),))

TEMPLATES = (MPI4PY_REDUCE, BINOMIAL_REDUCE, BINOMIAL_BCAST, RECURSIVE_DOUBLING)
_BY_NAME = {t.name: t for t in TEMPLATES}

#: Messages per step tried (mpi4py sends a length, then the pickle).
UNITS = (1, 2, 3)


@cache
def _parsed(text: str) -> Expr:
    return Expr.parse(text)


@dataclass(frozen=True)
class Tree:
    """One recognised tree: its template, ``unit`` messages per step of ``sizes``
    bytes each, on ``tag``."""

    template: str
    unit: int
    tag: int
    sizes: tuple[int, ...]

    @property
    def key(self) -> tuple:
        return ("tree", self.template, self.unit, self.tag, self.sizes)

    @staticmethod
    def of(key: tuple) -> Tree:
        return Tree(*key[1:])

    def describe(self) -> str:
        return (f"{_BY_NAME[self.template].title}, {self.unit} message(s) per step of "
                f"{', '.join(map(str, self.sizes))} bytes, tag {self.tag}")


def _fits(key: tuple, action: str, partner: int) -> bool:
    if key[OP] != OPS[action] or key[REQ] is not None:
        return False
    if action == "send":
        return key[DST] == partner
    if action == "recv":
        return key[SRC] == partner
    return key[SRC] == partner and key[DST] == partner


def _match_at(tokens: list[Token], i: int, steps, unit: int):
    """(end, tag, sizes of every message) of the tree starting at ``tokens[i]``, or None."""
    j, tag, sizes = i, None, []
    for action, partner in steps:
        for _ in range(unit):
            while j < len(tokens) and is_computation(tokens[j]) and sizes:
                j += 1
            if j >= len(tokens) or not is_message(tokens[j]):
                return None
            key = tokens[j].key
            if not _fits(key, action, partner) or (tag is not None and key[TAG] != tag):
                return None
            tag = key[TAG]
            sizes.append(key[SIZE])
            j += 1
    return j, tag, sizes


def _occurrences(tokens: list[Token], steps, unit: int) -> list[tuple[int, int, int, list]]:
    """Non-overlapping matches, left to right: (start, end, tag, sizes)."""
    out, i = [], 0
    first_action, first_partner = steps[0]
    while i < len(tokens):
        key = tokens[i].key
        if is_message(tokens[i]) and _fits(key, first_action, first_partner):
            found = _match_at(tokens, i, steps, unit)
            if found is not None:
                out.append((i, *found))
                i = found[0]
                continue
        i += 1
    return out


def _candidate(streams: list[list[Token]], template: Template, unit: int, known):
    """Every rank's occurrences and the trees they are, or None when the ranks
    do not all run the tree the same number of times (or, with ``known``, it is
    not one of those)."""
    n = len(streams)
    steps = [template.steps(n, r) for r in range(n)]
    if n < 2 or not all(steps):
        return None
    if known is None and max(map(len, steps)) < 2:
        return None     # one step per rank: any exchange looks like that
    found = [_occurrences(s, st, unit) for s, st in zip(streams, steps)]
    counts = {len(f) for f in found}
    if len(counts) != 1 or 0 in counts:
        return None
    trees = []
    for k in range(counts.pop()):
        tags = {f[k][2] for f in found}
        if len(tags) != 1:
            return None
        sizes = tuple(round(statistics.fmean(s for f in found for s in f[k][3][u::unit]))
                      for u in range(unit))
        tree = Tree(template.name, unit, tags.pop(), sizes)
        if known is not None and tree not in known:
            return None
        trees.append(tree)
    return found, trees


def _replaced(tokens: list[Token], occurrences, trees: list[Tree]) -> list[Token]:
    """``tokens`` with each occurrence one tree token; its computations go before it."""
    out: list[Token] = []
    last = 0
    for (start, end, _, _), tree in zip(occurrences, trees):
        out += tokens[last:start]
        inside = sum(t.values[0] for t in tokens[start:end] if is_computation(t))
        if inside > 0:
            if out and out[-1].key == SERIAL:
                inside += out.pop().values[0]
            out.append(Token(SERIAL, (inside,)))
        out.append(Token(tree.key, ()))
        last = end
    return out + tokens[last:]


def find_trees(streams: list[list[Token]], known: set[Tree] | None = None,
               ) -> tuple[list[list[Token]], list[Tree]]:
    """Every rank's tokens with its trees replaced, and the trees found.

    Of the templates and units that every rank follows the same number of
    times, the one covering most messages is taken first, then the search
    repeats on what is left.  Without ``known`` (the largest traced count) a
    template must give some rank two steps or more, since a single exchange
    fits any of them; with ``known`` (a smaller count) only trees found there
    are accepted.

    >>> from pevpm.trace.extract.tokens import Token
    >>> def send(to): return Token(("MPI_Send", 8, None, to, 0, None, (), None, None), ())
    >>> def recv(of): return Token(("MPI_Recv", 8, of, None, 0, None, (), None, None), ())
    >>> ranks = [[recv(1), recv(2)], [send(0), recv(3)], [recv(3), send(0)], [send(2), send(1)]]
    >>> streams, trees = find_trees(ranks)
    >>> [len(s) for s in streams], trees[0].template
    ([1, 1, 1, 1], 'mpi4py-reduce')
    """
    found_trees: list[Tree] = []
    while True:
        best = None
        for template in TEMPLATES:
            for unit in UNITS:
                got = _candidate(streams, template, unit, known)
                if got is None:
                    continue
                covered = sum(end - start for f in got[0] for start, end, _, _ in f)
                if best is None or covered > best[0]:
                    best = (covered, got)
        if best is None:
            return streams, found_trees
        occurrences, trees = best[1]
        streams = [_replaced(s, o, trees) for s, o in zip(streams, occurrences)]
        found_trees += [t for t in dict.fromkeys(trees) if t not in found_trees]


def model_lines(tree: Tree, sizes: list[str], index: str) -> list[str]:
    """The tree as ModelBuilder code (indented from column 0): a loop over the
    steps, a Runon of the template's arms.  ``sizes``: each message's size as
    a builder argument; ``index``: the loop index's name.

    >>> print("\\n".join(model_lines(Tree("recursive-doubling", 1, 5, (8,)), ["8"], "t1")))
    with b.loop('ceil(log2(numprocs))', index='t1'):
        with b.runon() as tree:
            with tree.case('xor(procnum, pow(2, t1)) < numprocs'):
                b.sendrecv(8, dest='xor(procnum, pow(2, t1))', source='xor(procnum, pow(2, t1))', tag=5)
    """
    template = _BY_NAME[tree.template]
    bit = template.bit(index)
    partner = repr(PARTNER.format(s=bit))
    out = [f"with b.loop({STEPS!r}, index={index!r}):", "    with b.runon() as tree:"]
    for guard, action in template.arms:
        out.append(f"        with tree.case({guard.format(s=bit)!r}):")
        for size in sizes:
            if action == "send":
                call = f"b.send({size}, dest={partner}, tag={tree.tag})"
            elif action == "recv":
                call = f"b.recv({size}, source={partner}, tag={tree.tag})"
            else:
                call = f"b.sendrecv({size}, dest={partner}, source={partner}, tag={tree.tag})"
            out.append(f"            {call}")
    return out
