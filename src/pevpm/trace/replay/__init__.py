"""Replay: a trace as a straight-line PEVPM program per rank, with the delays
inside its calls (:mod:`~pevpm.trace.replay.delays`), simulated on any machine
(:mod:`~pevpm.trace.replay.replay`).

>>> from pevpm.trace.replay.replay import PROCNUM
>>> PROCNUM
Expr('procnum')
"""
