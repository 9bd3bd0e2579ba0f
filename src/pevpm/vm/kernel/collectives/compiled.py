"""One rank's collective script as engine code, compact enough for 1,024 ranks.

A 1,024-rank alltoall is two million point-to-point calls.  Building an AST
statement and compiling it for each one cost tens of microseconds and a
few hundred bytes apiece; here a script's steps (plain tuples of numbers,
see :class:`~pevpm.vm.kernel.collectives.script.RankScript`) become instruction
tuples directly, and equal instructions are one shared tuple: a rank's code
is then a tuple of references, about eight bytes per call.

Non-blocking calls carry no request id: every collective step that starts
requests ends with a Waitall of all of them, which is the same as waiting
for every outstanding request of the collective's own context.

>>> from pevpm.vm.kernel import program as vm
>>> from pevpm.vm.kernel.collectives.script import RankScript
>>> s = RankScript(rank=0, tag=-2_000_001)
>>> _ = s.isend(dst=1, size=64); _ = s.isend(dst=2, size=64)
>>> code = compile_script(s.finish(), "a.c:3")
>>> [vm.OPCODE_NAMES[ins.op] for ins in code], code[0].peer.value, code[2].requests
(['SEND', 'SEND', 'WAIT'], 1, None)
>>> code[0].where
'a.c:3: MPI_Isend'
>>> compile_script(RankScript(5, -2_000_001).finish() + [s.steps[0]], "a.c:3")[0] is code[0]
True
"""

from __future__ import annotations

from pevpm.model import ast
from pevpm.vm.kernel import program as vm
from pevpm.vm.kernel.collectives.script import (
    COMPUTE,
    EXCHANGE,
    MESSAGE,
    WAITALL,
    statement_of,
)
from pevpm.vm.kernel.instructions import Exchange, Message, Serial, Wait

#: Instructions kept for sharing; past this many the table starts afresh
#: (code already built keeps its instructions).
SHARED_LIMIT = 1 << 20

_shared: dict[tuple, tuple] = {}


def compile_script(steps: list[tuple], where: str) -> tuple[tuple, ...]:
    """Engine code for a script's ``steps`` at the collective call ``where``."""
    return tuple([instruction_of(step, where) for step in steps])


def instruction_of(step: tuple, where: str) -> tuple:
    """The shared instruction of one step (of :attr:`RankScript.steps` form) at ``where``:
    what :func:`compile_script` puts in a code for it.

    >>> from pevpm.vm.kernel.collectives.script import MESSAGE
    >>> a = instruction_of((MESSAGE, "MPI_Irecv", 8, 3, 0, -5, "__coll0"), "b.c:4")
    >>> a is instruction_of((MESSAGE, "MPI_Irecv", 8, 3, 1, -5, "__coll9"), "b.c:4")
    True
    """
    key = (_shape(step), where)
    ins = _shared.get(key)
    if ins is None:
        if len(_shared) >= SHARED_LIMIT:
            _shared.clear()
        ins = _shared[key] = _instruction(step, where)
    return ins


def _shape(step: tuple) -> tuple:
    """What an instruction depends on: a message's own rank and request id do not count."""
    kind = step[0]
    if kind == MESSAGE:
        _, op, size, src, dst, tag, _request = step
        return (kind, op, size, dst if op in ast.SENDS else src, tag)
    return step[:1] if kind == WAITALL else step


def _instruction(step: tuple, where: str) -> tuple:
    c = vm.constant_fn
    kind = step[0]
    if kind == MESSAGE:
        _, op, size, src, dst, tag, _request = step
        stmt = statement_of(step)             # for messages only: any request id will do
        if op in ast.SENDS:
            return Message(vm.SEND, op, op in ast.BLOCKING_SENDS, c(size), c(dst), c(tag), None,
                           f"{where}: {op}", stmt)
        return Message(vm.RECV, op, op in ast.BLOCKING_RECVS, c(size), c(src), c(tag), None,
                       f"{where}: {op}", stmt)
    if kind == EXCHANGE:
        _, size, src, dst, tag, recv = step
        return Exchange(vm.SENDRECV, c(size), c(dst), c(recv), c(src), c(tag), c(tag),
                        f"{where}: MPI_Sendrecv", statement_of(step))
    if kind == WAITALL:
        return Wait(vm.WAIT, "MPI_Waitall", None, f"{where}: MPI_Waitall")
    assert kind == COMPUTE
    return Serial(vm.SERIAL, c(step[1]), None, f"{where}: Serial", statement_of(step))


__all__ = ["SHARED_LIMIT", "compile_script", "instruction_of"]
