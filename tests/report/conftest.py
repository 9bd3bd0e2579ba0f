"""Shared fixtures of the report tests."""

import pytest


@pytest.fixture
def sample_results():
    """A small results dictionary with every section of the report."""
    return {
        "title": "demo",
        "machine": {"hosts": "node0", "mpi": "MPICH 5"},
        "validation": {"jacobi": [
            {"n": 1, "measured_mean": 2.0, "measured_sd": 0.05, "predictions": {"full": 2.02,
                                                                               "mean2x1": 1.9}},
            {"n": 2, "measured_mean": 1.0, "measured_sd": 0.04, "predictions": {"full": 1.2}},
        ]},
        "scaling": {"jacobi": [{"n": 4, "mean": 0.6, "sd": 0.01}, {"n": 64, "mean": 0.2, "sd": 0.01}]},
        "breakdowns": {"jacobi": {"numprocs": 2, "ranks": [
            {"compute": 0.8, "communication": 0.1, "waiting": 0.1},
            {"compute": 0.7, "communication": 0.1, "waiting": 0.2}]}},
        "collectives": [{"title": "bcast 16 ranks", "completions": [1e-6, 2e-6, 2e-6, 3e-6]}],
        "trace": "trace.json",
    }
