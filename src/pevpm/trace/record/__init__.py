"""Recording: run an MPI program under the PMPI tracer (``pmpi/pevpm_trace.c``,
built for the program's MPI by :mod:`~pevpm.trace.record.build`) and store its
trace as OTF2 (:mod:`~pevpm.trace.record.record`).

>>> from pevpm.trace.record.build import find_mpicc
>>> find_mpicc("/nonexistent/bin/mpiexec") is None
True
"""
