"""Extract a readable PEVPM model (Python) from a trace.

Each rank's replay program (:mod:`pevpm.trace.replay`) becomes a token
stream: a message with its peers written relative to ``procnum`` (``(procnum
+ k) % numprocs``) and its requests renamed by slot (``r0``, ``r1``... the
lowest free slot when posted), or a computation with its seconds.  The
stream is compressed: the longest run of a repeated subsequence (period up
to :data:`MAX_PERIOD` tokens, at least two repeats) becomes a loop whose
computations are the fitted ``gamma(mean, sd)`` of the aligned gaps, and the
parts before and after are compressed the same way.  Ranks whose compressed
programs have the same shape share one ``Runon`` arm (or the whole model, if
all do).  What stays literal -- loop counts, sizes, tags -- is what the trace
at one rank count cannot generalise; the header says so.

>>> from pevpm.trace.events import Call, Send, Recv, Trace
>>> calls = lambda peer: ((Call("MPI_Init", 0, 0),)
...     + tuple(Call("MPI_Send", 2 * i + 1, 2 * i + 1, (Send(peer, 0, 8),)) for i in range(5))
...     + (Call("MPI_Finalize", 11, 11),))
>>> x = extract(Trace((calls(1), calls(0))))
>>> x.events, x.merged, "with b.loop(5):" in x.text
(14, True, True)
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from pevpm.model.ast import Message, Serial
from pevpm.trace.events import Trace
from pevpm.trace.replay import rank_statements

#: Longest loop body looked for, in tokens.
MAX_PERIOD = 64


@dataclass(frozen=True)
class Token:
    key: tuple            # ("serial",) or the message's op and fields
    values: tuple         # computation seconds, one per occurrence merged into it


@dataclass(frozen=True)
class LoopNode:
    count: int
    body: tuple


def _peer(value: int, rank: int, numprocs: int) -> str:
    if value == rank:
        return "procnum"
    if value < 0:
        return str(value)
    k = (value - rank) % numprocs
    if k <= numprocs // 2:
        return f"(procnum + {k}) % numprocs"
    return f"(procnum + numprocs - {numprocs - k}) % numprocs"


def rank_tokens(trace: Trace, rank: int) -> list[Token]:
    """Rank ``rank``'s program as tokens with relative peers and slot-named requests."""
    n = trace.numprocs
    env = {"procnum": rank, "numprocs": n}
    slots: dict[str, str] = {}
    tokens = []
    for s in rank_statements(trace, rank):
        if isinstance(s, Serial):       # back-to-back computations are one
            seconds = float(s.time.evaluate(env))
            if tokens and tokens[-1].key == ("serial",):
                seconds += tokens.pop().values[0]
            tokens.append(Token(("serial",), (seconds,)))
            continue
        assert isinstance(s, Message)

        def num(expr):
            return None if expr is None else int(expr.evaluate(env))

        request = None
        if s.request is not None and s.op in ("MPI_Isend", "MPI_Issend", "MPI_Irecv"):
            used = set(slots.values())
            request = next(f"r{i}" for i in range(len(used) + 1) if f"r{i}" not in used)
            slots[s.request] = request
        elif s.request is not None:
            request = slots.pop(s.request, s.request)
        requests = tuple(slots.pop(q, q) for q in s.requests)
        peers = tuple(None if e is None else _peer(num(e), rank, n) for e in (s.src, s.dst))
        tokens.append(Token((s.op, num(s.size), *peers, num(s.tag), request, requests,
                             num(s.root), num(s.recv_size)), ()))
    return tokens


def _best_repeat(ids: list[int]) -> tuple[int, int, int] | None:
    """(start, period, count) of the repeat covering most tokens (ties: shortest period)."""
    best, covered = None, 0
    n = len(ids)
    for p in range(1, min(MAX_PERIOD, n // 2) + 1):
        run = 0
        for i in range(n - p + 1):
            if i < n - p and ids[i] == ids[i + p]:
                run += 1
                continue
            count = (run + p) // p
            if count >= 2 and count * p > covered:
                best, covered = (i - run, p, count), count * p
            run = 0
    return best


def compress(tokens: list[Token]) -> list:
    """Tokens and :class:`LoopNode`s: the longest repeat as a loop, recursively around it."""
    if len(tokens) < 2:
        return list(tokens)
    index: dict[tuple, int] = {}
    ids = [index.setdefault(t.key, len(index)) for t in tokens]
    found = _best_repeat(ids)
    if found is None:
        return list(tokens)
    start, period, count = found
    body = tuple(Token(tokens[start + j].key,
                       tuple(v for k in range(count) for v in tokens[start + k * period + j].values))
                 for j in range(period))
    return (compress(tokens[:start]) + [LoopNode(count, body)]
            + compress(tokens[start + count * period:]))


def _shape(nodes) -> tuple:
    return tuple((n.count, _shape(n.body)) if isinstance(n, LoopNode) else n.key for n in nodes)


def _merge(programs: list[list]) -> list:
    """Programs of the same shape as one, computations pooled position by position."""
    first = programs[0]
    out = []
    for i, node in enumerate(first):
        if isinstance(node, LoopNode):
            out.append(LoopNode(node.count, tuple(_merge([list(p[i].body) for p in programs]))))
        else:
            out.append(Token(node.key, tuple(v for p in programs for v in p[i].values)))
    return out


def _seconds(values: tuple) -> str:
    """Python source of a computation: a constant, or a quoted ``gamma(mean, sd)`` draw."""
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f'"gamma({mean:.6g}, {sd:.3g})"' if sd > 0 else f"{mean:.6g}"


def _message_line(key: tuple) -> str:
    op, size, src, dst, tag, request, requests, root, recv_size = key
    args = [repr(op), str(size)]
    for name, value in (("source", src), ("dest", dst), ("tag", tag), ("request", request),
                        ("root", root), ("recv_size", recv_size)):
        if value is not None:
            args.append(f"{name}={value!r}")
    if requests:
        args.append(f"requests={list(requests)!r}")
    return f"b.message({', '.join(args)})"


def _lines(nodes, indent: int) -> list[str]:
    pad = " " * indent
    out = []
    for node in nodes:
        if isinstance(node, LoopNode):
            out.append(f"{pad}with b.loop({node.count}):")
            out.extend(_lines(node.body, indent + 4))
        elif node.key == ("serial",):
            out.append(f"{pad}b.serial({_seconds(node.values)})")
        else:
            out.append(pad + _message_line(node.key))
    return out


@dataclass(frozen=True)
class Extracted:
    text: str         # the model file
    events: int       # MPI calls in the trace
    lines: int        # lines of model code written
    merged: bool      # every rank shares one program
    notes: tuple[str, ...]


def extract(trace: Trace, source: str = "trace") -> Extracted:
    """The trace as a model file's text (a ``model()`` returning a ModelBuilder)."""
    programs = [compress(rank_tokens(trace, r)) for r in range(trace.numprocs)]
    groups: dict[tuple, list[int]] = {}
    for r, program in enumerate(programs):
        groups.setdefault(_shape(program), []).append(r)
    body: list[str] = []
    if len(groups) == 1:
        body += _lines(_merge(programs), 4)
    else:
        body.append("    with b.runon() as ranks:")
        for ranks in groups.values():
            guard = " || ".join(f"procnum == {r}" for r in ranks)
            body.append(f"        with ranks.case({guard!r}):")
            body += _lines(_merge([programs[r] for r in ranks]), 12)
    notes = [f"extracted from {source}: {trace.numprocs} ranks, {trace.call_count()} MPI calls",
             ("peers are written modulo numprocs relative to procnum; loop counts, sizes and "
              "tags are the traced values (one trace cannot tell how they scale)")]
    if len(groups) > 1:
        notes.append(f"{len(groups)} different rank programs: one Runon arm each")
    header = ['"""PEVPM model extracted by `pevpm extract`.', ""]
    header += [f"* {note}" for note in notes] + ['"""', "",
                                                 "from pevpm.model.builder import ModelBuilder",
                                                 "", "", "def model():",
                                                 "    b = ModelBuilder()"]
    text = "\n".join(header + body + ["    return b", ""])
    return Extracted(text, trace.call_count(), len(body) + 2, len(groups) == 1, tuple(notes))
