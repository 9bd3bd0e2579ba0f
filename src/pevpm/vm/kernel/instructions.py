"""The virtual machine's instructions as named records.

Every instruction of a compiled program (:mod:`pevpm.vm.kernel.program`) is one of
these records.  Each is a tuple whose first item is its opcode, so code can
be compared, hashed and shared as before; tools read the fields by name
(``ins.size``, ``ins.where``), not by position.  The compiled core
(:mod:`pevpm.vm.kernel.fastcore`) translates each record into a C struct once per
code, and numbers its operands by their field numbers (``Message._fields``).

Values (``time``, ``size``...) are callables ``f(env) -> number``; ``stmt``
is the AST statement (its expressions name the culprit in error messages);
``where`` is the instruction's source place.

>>> ins = Serial(0, None, None, "jacobi.c:12:9", None)
>>> ins.where, ins == (0, None, None, "jacobi.c:12:9", None)
('jacobi.c:12:9', True)
>>> Message._fields.index("size")
3
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

Value = Callable[[dict], Any]


class Serial(NamedTuple):
    """``SERIAL``: compute (or sleep) for ``time`` seconds, on the ranks ``on``
    names (None: every rank)."""
    op: int
    time: Value
    on: Any
    where: str | None
    stmt: Any


class Message(NamedTuple):
    """``SEND`` or ``RECV`` of ``size`` bytes to or from rank ``peer``; ``call``
    is the MPI operation's name, ``request`` the non-blocking call's request
    name (None: blocking, or a collective's)."""
    op: int
    call: str
    blocking: bool
    size: Value
    peer: Value
    tag: Value
    request: str | None
    where: str | None
    stmt: Any


class Exchange(NamedTuple):
    """``SENDRECV``: send ``size`` bytes to ``dst`` and receive ``recv_size``
    from ``src``, then wait for both."""
    op: int
    size: Value
    dst: Value
    recv_size: Value
    src: Value
    send_tag: Value
    recv_tag: Value
    where: str | None
    stmt: Any


class Wait(NamedTuple):
    """``WAIT`` for the named ``requests`` (None: every outstanding one)."""
    op: int
    call: str
    requests: tuple | None
    where: str | None


class Test(NamedTuple):
    """``TEST`` whether ``request`` has completed."""
    op: int
    request: str
    where: str | None


class Collective(NamedTuple):
    """``COLLECTIVE`` call ``call`` of ``size`` bytes (``root``: rooted calls)."""
    op: int
    call: str
    size: Value
    root: Value
    where: str | None
    stmt: Any


class Loop(NamedTuple):
    """``LOOP`` (``count`` times) or ``REPEAT`` (at most ``count`` times); the
    body starts at the next instruction, ``exit`` is the pc after the loop."""
    op: int
    count: Value
    index: str | None
    exit: int
    where: str | None
    stmt: Any


class Next(NamedTuple):
    """``NEXT`` (or ``NEXT_MARKED``, which also records the rank's clock):
    the end of a loop body, which starts at ``body``."""
    op: int
    body: int


class Until(NamedTuple):
    """``UNTIL``: the end of a Repeat's body; leaves when ``until`` holds, else
    runs the body (from ``body``) again."""
    op: int
    until: Value
    body: int
    where: str | None
    stmt: Any


class Branch(NamedTuple):
    """``RUNON``: jump to the first arm whose guard holds (``arms``: pairs of
    guard and pc), else to ``exit``."""
    op: int
    arms: tuple
    exit: int
    where: str | None


class Choice(NamedTuple):
    """``CONDITION``: jump to one arm drawn by weight (``arms``: pairs of
    weight and pc)."""
    op: int
    arms: tuple
    where: str | None


class Jump(NamedTuple):
    """``JUMP`` to ``target``."""
    op: int
    target: int


__all__ = ["Branch", "Choice", "Collective", "Exchange", "Jump", "Loop", "Message",
           "Next", "Serial", "Test", "Until", "Value", "Wait"]
