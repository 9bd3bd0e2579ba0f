"""Run a model on the compiled core (:mod:`pevpm.vm.kernel.fastcore`), or say why not.

:func:`simulate` takes :func:`pevpm.vm.kernel.engine.simulate`'s arguments and
gives the same :class:`~pevpm.vm.kernel.result.RunResult` for the same generator:
the compiled core follows the reference engine step for step and draws the
same random numbers in the same order.  The reference engine runs instead,
and the result's :attr:`~pevpm.vm.kernel.result.RunResult.engine_note` says so and
why (a Monte Carlo prediction gathers these notes once in
:attr:`~pevpm.vm.strategies.prediction.Prediction.engine_notes`, and ``pevpm predict``
prints them as ``note:`` lines), when

* the extension is not built (:data:`AVAILABLE` is False, :data:`UNAVAILABLE`
  says why),
* ``trace`` asks for time slices, or the model uses ``MPI_Test``,
* the core stops on something it does not handle (a deadlock, any error,
  a run that ends with requests left unmatched or never waited on, which
  the reference engine lists in
  :attr:`~pevpm.vm.kernel.result.RunResult.outstanding`): the generator is put back to its
  state at the start and the reference engine runs the model from there,
  so errors read exactly as the reference's (a run that ends in an error
  needs no note: the error is reported).

:func:`why_reference` names the first of the static reasons.

>>> from pevpm.model.builder import ModelBuilder
>>> from pevpm.machine.comm_models import Constant
>>> from pevpm.machine.machine import Machine
>>> b = ModelBuilder()
>>> b.sendrecv(8, dest="(procnum + 1) % numprocs", source="(procnum + numprocs - 1) % numprocs")
>>> run = simulate(b.build(), 4, Machine(Constant(0.25)))
>>> run.makespan, run.engine_note
(0.25, None)
"""

from __future__ import annotations

import gc
from collections.abc import Mapping
from contextlib import contextmanager

import numpy as np

from pevpm.errors import EventLimitError, PevpmError, WallClockLimitError
from pevpm.machine.machine import Machine
from pevpm.machine.transfer import for_placement
from pevpm.model.ast import Model
from pevpm.vm.kernel import engine
from pevpm.vm.kernel import program as vm
from pevpm.vm.kernel.result import (
    COMMUNICATION,
    COMPUTE,
    WAITING,
    MessageRecord,
    RankTimes,
    RunResult,
)

try:
    from pevpm.vm.kernel import fastcore
except ImportError as exc:          # not built: the pure-Python engine does everything
    fastcore = None
    UNAVAILABLE = (f"the compiled engine core is not built ({exc}); using the pure-Python "
                   "engine (reinstall with `pip install -e .` and a C compiler)")
else:
    UNAVAILABLE = None

#: Whether the compiled core can be used at all.
AVAILABLE = fastcore is not None


def why_reference(program: vm.Program, trace: bool = False) -> str | None:
    """Why a run of ``program`` goes to the reference engine, or None."""
    if not AVAILABLE:
        return UNAVAILABLE
    if trace:
        return "the compiled core does not make time slices (a trace)"
    if vm.TEST in program.opcodes:
        return "the compiled core does not run MPI_Test"
    return None


def simulate(model: Model, numprocs: int, machine: Machine, *,
             params: Mapping[str, float] | None = None, rng: np.random.Generator | None = None,
             bound: str | None = None, trace: bool = False, limits: engine.Limits | None = None,
             program: vm.Program | None = None, records: bool = False) -> RunResult:
    """:func:`pevpm.vm.kernel.engine.simulate` on the compiled core where it applies;
    ``records`` keeps the message records without the slices of a trace."""
    if int(numprocs) != numprocs or numprocs < 1 or bound not in (None, "min", "max"):
        return engine.simulate(model, numprocs, machine, params=params, rng=rng, bound=bound,
                               trace=trace, limits=limits, program=program)
    if program is None:             # a model simulated again reuses its program and folded codes
        program = vm.compiled(model, params)
    rng = rng if rng is not None else np.random.default_rng(0)
    why = why_reference(program, trace)
    if why is not None:
        return _on_reference(why, model, numprocs, machine, params, rng, bound, trace, limits,
                             program)
    start = rng.bit_generator.state
    try:
        return _run_core(program, model, int(numprocs), machine, params, rng, bound,
                         limits or engine.Limits(), records)
    except (EventLimitError, WallClockLimitError):
        raise                       # the core names the place itself: a rerun would take as long
    except (fastcore.Unsupported, PevpmError, ArithmeticError, ValueError) as exc:
        rng.bit_generator.state = start
        result = _on_reference(core_stopped(exc), model, numprocs, machine, params, rng,
                               bound, records, limits, program)
        result.slices = None
        return result


def core_stopped(exc: Exception) -> str:
    """The note for a run the compiled core stopped on with ``exc``.

    >>> core_stopped(ValueError("x"))
    'the compiled core stopped on an error the pure-Python engine reports in its own words'
    """
    if AVAILABLE and isinstance(exc, fastcore.Unsupported):
        return f"the compiled core does not handle {exc}"
    return "the compiled core stopped on an error the pure-Python engine reports in its own words"


def _on_reference(why, model, numprocs, machine, params, rng, bound, trace, limits,
                  program) -> RunResult:
    """The run on the reference engine, its result noting ``why``."""
    result = engine.simulate(model, numprocs, machine, params=params, rng=rng, bound=bound,
                             trace=trace, limits=limits, program=program)
    result.engine_note = why
    return result


def _run_core(program, model, numprocs, machine, params, rng, bound, limits,
              records) -> RunResult:
    placement = machine.topology.place(numprocs)
    comm = for_placement(machine.comm if bound is None else machine.comm.bounded(bound),
                         placement.node_of)
    with no_cycle_collection():
        setup = engine.RankSetup.of(program, model, numprocs, machine, params, rng, bound)
        core = fastcore.Core(setup.codes, setup.envs, setup.proc_ids, setup.factors, machine,
                             comm, rng, placement, limits.max_events, limits.max_time, records,
                             limits.max_wall, program.statuses)
        times, critical, messages, collectives, kept, marks = core.run()
    ranks = [RankTimes(*t) for t in times]
    return RunResult(
        makespan=max(t[3] for t in times), ranks=ranks,
        critical_path=dict(zip((COMPUTE, COMMUNICATION, WAITING), critical)),
        messages_simulated=messages,
        collectives=sorted(collectives.values(), key=lambda c: (c.where, c.occurrence)),
        messages=kept if records else None, marks=marks)


@contextmanager
def no_cycle_collection():
    """Pause Python's cycle collector during a run and its set-up: the rank
    set-up and the core allocate many small objects, and each collection
    they set off walks every live object (a tenth of the time at 1,024 ranks,
    and at 8,192 during the set-up); cycles are collected after.  Replay
    holds the same off while it reads and converts a long trace.

    >>> with no_cycle_collection():
    ...     gc.isenabled()
    False
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


__all__ = ["AVAILABLE", "UNAVAILABLE", "MessageRecord", "core_stopped", "no_cycle_collection",
           "simulate", "why_reference"]
