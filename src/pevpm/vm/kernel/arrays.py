"""Straight-line programs given as instruction arrays, run on the compiled core.

A replayed trace is one straight line of instructions per rank, every
operand a number (:mod:`pevpm.trace.replay.fast`).  Such a program needs no
model, no inlining and no compilation: :func:`rank_code` makes each rank's
instruction records (:mod:`pevpm.vm.kernel.instructions`) straight from its
:data:`INSTRUCTION` array, requests named by integers, and
:class:`ArrayProgram` hands them to :func:`pevpm.vm.kernel.fastengine.simulate`
in place of a compiled model's folded codes, so the run, its result and its
notes (a run the core leaves for the reference engine says why) are the
same as for a model.  There is no limit on the program's length.

An instruction array's fields: ``op`` (the opcode, :mod:`pevpm.vm.kernel.program`),
``name`` (the MPI call's place in the names list), ``flag`` (a blocking
send or receive; a Serial that sleeps), ``size``, ``peer`` (a send's
destination, a receive's source, a collective's root), ``tag``,
``recv_size``, ``src`` and ``recv_tag`` (an Exchange's receive), ``request``
(-1: none; a Wait's requests are ``requests[first:first + count]``),
``seconds`` (a Serial's), ``call`` (the traced call's index on its rank, for
the instruction's place; -1: none).

>>> from pevpm.machine.comm_models import Constant
>>> from pevpm.machine.machine import Machine
>>> code = np.zeros(2, dtype=INSTRUCTION)
>>> code["op"] = vm.SERIAL, vm.SEND
>>> code["seconds"][0], code["size"][1], code["peer"][1], code["flag"][1] = 0.5, 8, 1, 1
>>> code["request"] = -1
>>> code["name"][1] = 0
>>> other = code.copy()
>>> other["op"][1], other["peer"][1] = vm.RECV, 0
>>> program = ArrayProgram([code, other], np.zeros(0, np.int64), ["MPI_Send"], "demo")
>>> [type(ins).__name__ for ins in program.specialize({"procnum": 0})]
['Serial', 'Message']
>>> run = simulate(program, Machine(Constant(0.25)))
>>> run.makespan, run.engine_note
(0.75, None)
"""

from __future__ import annotations

from collections import deque
from itertools import repeat

import numpy as np

from pevpm.model import ast
from pevpm.model.builder import ModelBuilder
from pevpm.model.expr import Expr
from pevpm.vm.kernel import program as vm
from pevpm.vm.kernel.instructions import Collective, Exchange, Message, Serial, Wait

INSTRUCTION = np.dtype([("op", "i1"), ("name", "<i4"), ("flag", "i1"), ("size", "<i8"),
                        ("peer", "<i8"), ("tag", "<i8"), ("recv_size", "<i8"),
                        ("src", "<i8"), ("recv_tag", "<i8"), ("request", "<i8"),
                        ("first", "<i8"), ("count", "<i8"), ("seconds", "<f8"),
                        ("call", "<i8")])


class Seconds(float):
    """A Serial's time, a number known now: ``f(env)`` gives it, ``f.value`` too (the
    compiled core reads it without calling), one small object per Serial."""

    __slots__ = ()

    def __call__(self, env) -> float:
        return float(self)

    value = property(float.__float__)       # in C: the core reads it for every Serial


#: The statements the records name (their expressions only word errors): a value in
#: an instruction array is a traced number.
_SERIAL = {False: ast.Serial(Expr.of("traced_gap")),
           True: ast.Serial(Expr.of("traced_gap"), sleep=True)}
_MESSAGE = ast.Message("MPI_Send", Expr.of("traced_size"), Expr.of("traced_source"),
                       Expr.of("traced_destination"), Expr.of("traced_tag"),
                       root=Expr.of("traced_root"))


def rank_code(code, requests: np.ndarray, names: list[str], place: str) -> tuple:
    """The instruction records of one rank's :data:`INSTRUCTION` array (or a mapping of
    its fields to arrays); ``place``: the prefix of their places (``"{place} call {k}
    ({name})"``).  Each kind of instruction is made in C-level ``map`` passes (no
    Python code per instruction: a long trace has millions), :data:`BLOCK` at a time
    (the passes' lists stay small)."""
    out: list = [None] * len(code["op"])
    for start in range(0, len(out), BLOCK):
        _records(out, {name: code[name][start:start + BLOCK] for name in INSTRUCTION.names},
                 start, requests, names, place)
    if None in out:
        raise ValueError(f"an opcode other than {sorted(ArrayProgram.opcodes)} in an "
                         "instruction array")
    return tuple(out)


#: Instructions made into records at a time.
BLOCK = 1 << 18


def _records(out: list, code: dict, start: int, requests: np.ndarray, names: list[str],
             place: str) -> None:
    """Put the records of ``code`` (one block of a rank's fields) in ``out[start:]``."""
    put = out.__setitem__
    op = code["op"]

    def rows(*ops) -> tuple[list[int], dict[str, np.ndarray]]:
        at = np.flatnonzero(np.isin(op, ops))
        return (at + start).tolist(), {name: code[name][at] for name in INSTRUCTION.names}

    def wheres(c: dict) -> list[str]:
        return list(map(f"{place} call {{}} ({{}})".format, c["call"].tolist(),
                        map(names.__getitem__, c["name"].tolist())))

    def const(column) -> map:
        values = column.tolist()
        shared = {v: vm.constant_fn(v) for v in set(values)}   # a trace repeats a few
        return map(shared.__getitem__, values)

    at, c = rows(vm.SERIAL)
    _fill(put, at, Serial, repeat(vm.SERIAL), map(Seconds, c["seconds"].tolist()),
          repeat(None), repeat(None), map(_SERIAL.__getitem__, (c["flag"] == 1).tolist()))
    at, c = rows(vm.SEND, vm.RECV)
    request = c["request"].tolist()
    _fill(put, at, Message, c["op"].tolist(), map(names.__getitem__, c["name"].tolist()),
          (c["flag"] == 1).tolist(), const(c["size"]), const(c["peer"]), const(c["tag"]),
          map({-1: None}.get, request, request), wheres(c), repeat(_MESSAGE))
    at, c = rows(vm.WAIT)
    low = int(c["first"].min()) if len(at) else 0
    listed = requests[low:int((c["first"] + c["count"]).max()) if len(at) else 0].tolist()
    _fill(put, at, Wait, repeat(vm.WAIT), map(names.__getitem__, c["name"].tolist()),
          map(tuple, map(listed.__getitem__, map(slice, (c["first"] - low).tolist(),
                                                 (c["first"] - low + c["count"]).tolist()))),
          wheres(c))
    at, c = rows(vm.SENDRECV)
    _fill(put, at, Exchange, repeat(vm.SENDRECV), const(c["size"]), const(c["peer"]),
          const(c["recv_size"]), const(c["src"]), const(c["tag"]), const(c["recv_tag"]),
          wheres(c), repeat(_MESSAGE))
    at, c = rows(vm.COLLECTIVE)
    _fill(put, at, Collective, repeat(vm.COLLECTIVE), map(names.__getitem__, c["name"].tolist()),
          const(c["size"]), const(c["peer"]), wheres(c), repeat(_MESSAGE))


def _fill(put, at: list[int], record: type, *fields) -> None:
    """``put(at[k], record(*fields[k]))`` for every k, in C."""
    deque(map(put, at, map(tuple.__new__, repeat(record), zip(*fields))), maxlen=0)


class ArrayProgram:
    """Each rank's straight-line code from its instruction array, standing in for a
    compiled model's :class:`~pevpm.vm.kernel.program.Program`: a rank's
    :meth:`specialize` is its code, made on first use."""

    statuses = frozenset()
    invariant = frozenset()
    opcodes = frozenset((vm.SERIAL, vm.SEND, vm.RECV, vm.SENDRECV, vm.WAIT, vm.COLLECTIVE))

    def __init__(self, codes: list, requests: np.ndarray, names: list[str], source: str):
        self.arrays, self.requests, self.names, self.source = codes, requests, names, source
        self.codes: list[tuple | None] = [None] * len(codes)

    def specialize(self, env) -> tuple:
        rank = env["procnum"]
        if self.codes[rank] is None:
            self.codes[rank] = rank_code(self.arrays[rank], self.requests, self.names,
                                         f"{self.source}: rank {rank}")
            self.arrays[rank] = None        # its records hold it all now
        return self.codes[rank]

    @property
    def numprocs(self) -> int:
        return len(self.codes)


def simulate(program: ArrayProgram, machine, *, rng: np.random.Generator | None = None,
             records: bool = False, limits=None):
    """One run of ``program`` at its rank count on ``machine``
    (:func:`pevpm.vm.kernel.fastengine.simulate`'s result and notes)."""
    from pevpm.vm.kernel import fastengine

    return fastengine.simulate(_EMPTY_MODEL, program.numprocs, machine, rng=rng,
                               program=program, records=records, limits=limits)


#: The model a run of an :class:`ArrayProgram` names: no constants, parameters or
#: processors of its own (the machine's processors, or the defaults').
_EMPTY_MODEL = ModelBuilder(source="instruction arrays").build()
