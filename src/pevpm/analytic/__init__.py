"""Analytic performance models: scaling laws, MVA, Cremonesi-Gennaro SPMD models, DP*Graph.

>>> from pevpm.analytic import amdahl_speedup, fit_amdahl, speedup, QCRD_TABLE4
>>> s = fit_amdahl([2, 4, 8], [1.8, 3.1, 4.7])
>>> round(float(amdahl_speedup(16, 1 - s)), 2)
6.37
>>> round(float(speedup("bus-aio", QCRD_TABLE4, 512, 64)), 3)
9.127
"""

from pevpm.analytic.ctmc import solve_ctmc
from pevpm.analytic.dpgraph import (
    LinearCost,
    Message,
    SendModeCost,
    TimingGraph,
    fit_linear_cost,
    fit_send_mode,
)
from pevpm.analytic.fitting import SpmdFit, average_error, fit_spmd
from pevpm.analytic.laws import (
    amdahl_speedup,
    fit_amdahl,
    gustafson_speedup,
    hill_marty_asymmetric,
    hill_marty_dynamic,
    hill_marty_symmetric,
    khanyile_time,
    message_time,
    sun_chen_fixed_time,
)
from pevpm.analytic.mva import (
    MVAResult,
    exact_multiclass,
    schweitzer_bard,
    single_class_trajectory,
    solve_closed_network,
)
from pevpm.analytic.spmd import (
    MODELS,
    QCRD_TABLE4,
    SpmdParameters,
    burst_times,
    closed_form_r1,
    closed_form_r2,
    clu_aio_network,
    speedup,
    speedup_surface,
    symmetric_cluster_times,
)

__all__ = [
    "MODELS",
    "QCRD_TABLE4",
    "LinearCost",
    "MVAResult",
    "Message",
    "SendModeCost",
    "SpmdFit",
    "SpmdParameters",
    "TimingGraph",
    "amdahl_speedup",
    "average_error",
    "burst_times",
    "closed_form_r1",
    "closed_form_r2",
    "clu_aio_network",
    "exact_multiclass",
    "fit_amdahl",
    "fit_linear_cost",
    "fit_send_mode",
    "fit_spmd",
    "gustafson_speedup",
    "hill_marty_asymmetric",
    "hill_marty_dynamic",
    "hill_marty_symmetric",
    "khanyile_time",
    "message_time",
    "schweitzer_bard",
    "single_class_trajectory",
    "solve_closed_network",
    "solve_ctmc",
    "speedup",
    "speedup_surface",
    "sun_chen_fixed_time",
    "symmetric_cluster_times",
]
