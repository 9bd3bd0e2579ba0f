"""Receive sizes in an extracted model as buffers for what the model sends.

A send whose size varies from repetition to repetition (a loose message,
:func:`pevpm.trace.extract.compress.is_loose`) is written as the mean of its
traced sizes.  A receive on another rank that matched some of those messages
may have kept its own traced size, smaller than that mean: the model would
then stop with MPI_ERR_TRUNCATE (CoMD's halo exchange: a mean of 28,644 bytes
sent into a receive of 28,616).  A receive's size only bounds what it takes
(the time of a message follows the size sent), so every receive whose tag a
loose send uses is written at least as large as the largest message sent with
that tag anywhere in the traces (:func:`send_bounds`, :func:`raised`); a mean
never exceeds that.  Programs without loose sends are left as they are.

>>> from pevpm.trace.extract.tokens import Token
>>> varies = Token(("MPI_Send", None, 0, 1, 7, None, (), None, None), (16, 48))
>>> fixed = Token(("MPI_Send", 64, 0, 1, 3, None, (), None, None), ())
>>> bounds = send_bounds([varies, fixed])
>>> bounds
{7: 48}
>>> raised("32", 7, bounds), raised("64", 7, bounds), raised("32", 3, bounds)
('48', '64', '32')
>>> bound("MPI_ANY_TAG", bounds), raised("8 * numprocs", "MPI_ANY_TAG", bounds)
(48, 'max(8 * numprocs, 48)')
"""

from __future__ import annotations

from collections.abc import Iterable

from pevpm.trace.extract.compress import is_loose
from pevpm.trace.extract.tokens import OP, SIZE, TAG, Token, is_message

#: Point-to-point operations that send (an ``MPI_Sendrecv`` sends ``size``).
SENDS = ("MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Isend", "MPI_Issend",
         "MPI_Sendrecv")


def send_bounds(tokens: Iterable[Token]) -> dict:
    """The largest size sent with each tag (every repetition's, of any rank and
    count), for the tags some loose send uses; other tags are left out."""
    largest: dict = {}
    loose_tags = set()
    for t in tokens:
        if not (is_message(t) and t.key[OP] in SENDS):
            continue
        tag = t.key[TAG]
        if is_loose(t):
            loose_tags.add(tag)
        sizes = t.values if is_loose(t) else (t.key[SIZE],)
        largest[tag] = max((largest.get(tag, 0), *sizes))
    return {tag: largest[tag] for tag in sorted(loose_tags, key=repr)}


def bound(tag, bounds: dict) -> int | None:
    """The size a receive with ``tag`` must take at least (a tag that is no
    number, such as ``MPI_ANY_TAG``: the largest of all); None: no bound."""
    if not isinstance(tag, int):
        return max(bounds.values(), default=None)
    return bounds.get(tag)


def raised(size: str, tag, bounds: dict) -> str:
    """A receive's written ``size`` (a number or an expression) made at least
    the bound of its ``tag``; as it is where it already is, or no bound."""
    least = bound(tag, bounds)
    if least is None:
        return size
    if size.isdigit():
        return str(max(int(size), least))
    return f"max({size}, {least})"
