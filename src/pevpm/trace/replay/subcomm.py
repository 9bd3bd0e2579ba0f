"""A collective on a sub-communicator (``MPI_Comm_split``, ``MPI_Cart_sub``)
as point-to-point messages among its members, for the virtual machine, which
has one communicator.

The pattern is a plain one, not the MPI library's own algorithm, and the
same for every collective and every member: ``ceil(log2(m))`` rounds of a
dissemination exchange among the ``m`` members, each rank sending to the
member ``2^k`` places after it and receiving from the one ``2^k`` before
(a Bcast or a Reduce takes as many rounds through a binomial tree).  A
root plays no part of its own, so every member runs one program, which
``pevpm extract`` can write once for all of them.  Each message carries the
per-peer size replay computes for the collective and the tag :data:`TAG`,
which the virtual machine matches in a context of its own
(:data:`pevpm.vm.kernel.matching.SUBCOMM_TAG`), so the messages match only
one another and never a program's ``MPI_ANY_TAG`` receive (MPI keeps the
messages of one pair and tag in order).

>>> [(m.op, m.src.evaluate({}), m.dst.evaluate({}), m.size.evaluate({}))
...  for m in point_to_point((0, 2, 4), 2, 8)]
[('MPI_Sendrecv', 0, 4, 8), ('MPI_Sendrecv', 4, 0, 8)]
>>> point_to_point((1,), 1, 8)
[]
"""

from __future__ import annotations

from pevpm.model.ast import Message
from pevpm.model.expr import Expr
from pevpm.vm.kernel.matching import SUBCOMM_TAG

#: The tag of the messages a sub-communicator's collective becomes.
TAG = SUBCOMM_TAG


def _message(size: int, source: int, dest: int) -> Message:
    """An ``MPI_Sendrecv`` of ``size`` bytes each way."""
    return Message("MPI_Sendrecv", Expr.of(size), Expr.of(source), Expr.of(dest), Expr.of(TAG),
                   None, (), None, Expr.of(size))


def point_to_point(members: tuple[int, ...], rank: int, size: int) -> list[Message]:
    """What world rank ``rank`` sends and receives for a collective of ``size``
    bytes per peer on the communicator of world ranks ``members``."""
    m, me = len(members), members.index(rank)
    out, step = [], 1
    while step < m:
        out.append(_message(size, members[(me - step) % m], members[(me + step) % m]))
        step *= 2
    return out
