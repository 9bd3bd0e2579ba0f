"""Calibrating a model: how long a program's own serial regions take on this machine.

A PEVPM model gives every ``Serial`` segment a time; for a program that is
not one of pevpm's examples those times come from the program itself.
Either time a Python function directly::

    from pevpm.calibrate import time_region
    timing = time_region(my_kernel, name="update", nprocs=2)
    print(timing.spread.body_mean, timing.spread.body_sd, timing.disturbed)

or let the program report its regions (``with region("update"): ...`` or
``PEVPM-REGION update <seconds>`` lines) and run it with
``pevpm calibrate -o calibration.json -- mpiexec -n 2 python prog.py``;
``pevpm predict --calibration calibration.json`` then fills the model's
``t_update`` and ``t_update_sd``.  Every measurement carries a probe of the
machine's load (:mod:`pevpm.host`), and the statistics
resist descheduled calls (:mod:`pevpm.calibrate.robust`).  See
docs/calibration.md for a walk-through.
"""

from pevpm.calibrate.parameters import Calibration, load_calibration, load_parameters
from pevpm.calibrate.regions import parse_region_lines, region, run_program
from pevpm.calibrate.robust import RobustSummary, robust_summary
from pevpm.calibrate.timing import (
    RegionTiming,
    Watched,
    call_spread,
    neighbours_running,
    quietest,
    single_call_times,
    time_call,
    time_region,
)
from pevpm.host import MachineState, disturbance, probe_machine

__all__ = [
    "Calibration", "MachineState", "RegionTiming", "RobustSummary", "Watched", "call_spread",
    "disturbance", "load_calibration", "load_parameters", "neighbours_running", "parse_region_lines",
    "probe_machine", "quietest", "region", "robust_summary", "run_program", "single_call_times",
    "time_call", "time_region",
]
