"""Straight-line programs given as instruction arrays, run on the compiled core.

A replayed trace is one straight line of instructions per rank, every
operand a number (:mod:`pevpm.trace.replay.fast`).  Such a program needs no
model, no inlining and no compilation: a rank's code is an :class:`ArrayCode`
over its :data:`INSTRUCTION` array, which the compiled core reads in one
typed loop into its C instructions (requests named by integers), and
:class:`ArrayProgram` hands the codes to
:func:`pevpm.vm.kernel.fastengine.simulate` in place of a compiled model's
folded codes, so the run, its result and its notes (a run the core leaves
for the reference engine says why) are the same as for a model.  An
instruction's record (:mod:`pevpm.vm.kernel.instructions`: its place and
statement) is made only when something asks for it: the core for a
collective or an error, the reference engine for each instruction it runs.
There is no limit on the program's length.

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
>>> program.specialize({"procnum": 0})[1].where
'demo: rank 0 call 0 (MPI_Send)'
>>> run = simulate(program, Machine(Constant(0.25)))
>>> run.makespan, run.engine_note
(0.75, None)
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from pevpm.model import ast
from pevpm.model.builder import ModelBuilder
from pevpm.model.expr import Expr
from pevpm.vm.kernel import program as vm
from pevpm.vm.kernel.instructions import Collective, Exchange, Message, Serial, Wait

INSTRUCTION = np.dtype([("op", "i1"), ("name", "<i4"), ("flag", "i1"), ("size", "<i8"),
                        ("peer", "<i4"), ("tag", "<i8"), ("recv_size", "<i8"),
                        ("src", "<i4"), ("recv_tag", "<i8"), ("request", "<i8"),
                        ("first", "<i8"), ("count", "<i4"), ("seconds", "<f8"),
                        ("call", "<i4")])

#: The statements the records name (their expressions only word errors): a value in
#: an instruction array is a traced number.
_SERIAL = {False: ast.Serial(Expr.of("traced_gap")),
           True: ast.Serial(Expr.of("traced_gap"), sleep=True)}
_MESSAGE = ast.Message("MPI_Send", Expr.of("traced_size"), Expr.of("traced_source"),
                       Expr.of("traced_destination"), Expr.of("traced_tag"),
                       root=Expr.of("traced_root"))


class ArrayCode(Sequence):
    """One rank's code: its :data:`INSTRUCTION` fields (``fields``, each a contiguous
    array), the Waits' ``requests`` and the call ``names``, read as a sequence of
    instruction records made one at a time when asked for (``place``: the prefix
    of their places, ``"{place} call {k} ({name})"``).

    >>> code = np.zeros(1, dtype=INSTRUCTION)
    >>> code["op"], code["count"], code["call"] = vm.WAIT, 2, 7
    >>> ArrayCode(code, np.array([5, 9]), ["MPI_Waitall"], "t: rank 0")[0]
    Wait(op=4, call='MPI_Waitall', requests=(5, 9), where='t: rank 0 call 7 (MPI_Waitall)')
    """

    __slots__ = ("fields", "requests", "names", "place", "_last")

    def __init__(self, code, requests: np.ndarray, names: list[str], place: str):
        self.fields = {name: np.ascontiguousarray(code[name], dtype=INSTRUCTION[name])
                       for name in INSTRUCTION.names}
        self.requests = np.ascontiguousarray(requests, dtype=np.int64)
        self.names, self.place = names, place
        self._last: tuple = (-1, None)      # the record read last (the core reads one twice)
        self._check()

    def _check(self) -> None:
        """Refuse an opcode, call name or Wait's requests the arrays do not hold
        (the core reads them without looking)."""
        op, f = self.fields["op"], self.fields
        wrong = [
            (~np.isin(op, sorted(ArrayProgram.opcodes)), "an opcode other than "
             f"{sorted(ArrayProgram.opcodes)}"),
            ((op != vm.SERIAL) & (op != vm.SENDRECV)
             & ((f["name"] < 0) | (f["name"] >= len(self.names))),
             f"a call name past the {len(self.names)} names"),
            ((op == vm.WAIT) & ((f["first"] < 0) | (f["count"] < 0)
                                | (f["first"] + f["count"] > len(self.requests))),
             f"a Wait on requests past the {len(self.requests)} listed"),
        ]
        for bad, what in wrong:
            if bad.any():
                raise ValueError(f"{self.place}: instruction {int(np.argmax(bad))} has {what}")

    def __len__(self) -> int:
        return len(self.fields["op"])

    def __getitem__(self, pc):
        pc = range(len(self))[operator.index(pc)]       # IndexError past either end
        if self._last[0] != pc:
            self._last = (pc, self._record(pc))
        return self._last[1]

    def _record(self, pc: int):
        f = self.fields
        return self._make(lambda field: f[field].item(pc))

    def records(self) -> tuple:
        """Every instruction's record, read column by column (for the reference
        engine, which runs them all)."""
        columns = {name: column.tolist() for name, column in self.fields.items()}
        return tuple([self._make(lambda field, pc=pc: columns[field][pc])
                      for pc in range(len(self))])

    def _make(self, value):
        """The record of the instruction whose fields ``value(field)`` gives (Python numbers)."""
        op = value("op")
        const = vm.constant_fn
        if op == vm.SERIAL:
            return Serial(op, const(value("seconds")), None, None, _SERIAL[value("flag") == 1])
        name = self.names[value("name")]
        where = f"{self.place} call {value('call')} ({name})"
        if op in (vm.SEND, vm.RECV):
            request = value("request")
            return Message(op, name, value("flag") == 1, const(value("size")),
                           const(value("peer")), const(value("tag")),
                           None if request == -1 else request, where, _MESSAGE)
        if op == vm.WAIT:
            first = value("first")
            listed = self.requests[first:first + value("count")]
            return Wait(op, name, tuple(listed.tolist()), where)
        if op == vm.SENDRECV:
            return Exchange(op, const(value("size")), const(value("peer")),
                            const(value("recv_size")), const(value("src")), const(value("tag")),
                            const(value("recv_tag")), where, _MESSAGE)
        return Collective(op, name, const(value("size")), const(value("peer")), where, _MESSAGE)


class ArrayProgram:
    """Each rank's straight-line code from its instruction array, standing in for a
    compiled model's :class:`~pevpm.vm.kernel.program.Program`: a rank's
    :meth:`specialize` is its :class:`ArrayCode`."""

    statuses = frozenset()
    invariant = frozenset()
    opcodes = frozenset((vm.SERIAL, vm.SEND, vm.RECV, vm.SENDRECV, vm.WAIT, vm.COLLECTIVE))

    def __init__(self, codes: list, requests: np.ndarray, names: list[str], source: str):
        self.codes = [ArrayCode(code, requests, names, f"{source}: rank {rank}")
                      for rank, code in enumerate(codes)]
        self.source = source

    def specialize(self, env) -> ArrayCode:
        return self.codes[env["procnum"]]

    def with_records(self) -> ArrayProgram:
        """This program with each rank's code as the tuple of its records (what the
        reference engine reads: made once, not one record per step).

        >>> code = np.zeros(1, dtype=INSTRUCTION)
        >>> ArrayProgram([code], np.zeros(0, np.int64), [], "t").with_records().specialize(
        ...     {"procnum": 0})[0].time.value
        0.0
        """
        copy = object.__new__(ArrayProgram)
        copy.codes, copy.source = [code.records() for code in self.codes], self.source
        return copy

    @property
    def numprocs(self) -> int:
        return len(self.codes)


def simulate(program: ArrayProgram, machine, *, rng: np.random.Generator | None = None,
             records: bool = False, limits=None, trace: bool = False):
    """One run of ``program`` at its rank count on ``machine``
    (:func:`pevpm.vm.kernel.fastengine.simulate`'s result and notes; ``trace``:
    with time slices, which the reference engine makes, reading the records one
    by one)."""
    from pevpm.vm.kernel import fastengine

    if trace and fastengine.why_reference(program, trace) is not None:
        program = program.with_records()
    return fastengine.simulate(_EMPTY_MODEL, program.numprocs, machine, rng=rng,
                               program=program, records=records, limits=limits, trace=trace)


#: The model a run of an :class:`ArrayProgram` names: no constants, parameters or
#: processors of its own (the machine's processors, or the defaults').
_EMPTY_MODEL = ModelBuilder(source="instruction arrays").build()
