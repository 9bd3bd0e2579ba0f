"""Validation: run the example programs for real, calibrate them, and build a contention lab.

* :mod:`pevpm.validate.runner` - ``run_example("jacobi", 2, repeats=5)`` under mpiexec
* :mod:`pevpm.validate.calibration` - serial kernel times for the models
* :mod:`pevpm.validate.lab` - namespaces and shaped links on one machine (``pevpm lab``)
* :mod:`pevpm.validate.result` - the programs' one-line JSON result
"""
