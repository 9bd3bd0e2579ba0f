"""The PEVPM virtual machine, in two layers.

* :mod:`pevpm.vm.kernel` runs one simulated execution of a model: the
  compiled program, the engine (compiled core and reference oracle), message
  matching, the contention scoreboard, CPU and link sharing, collectives.
* :mod:`pevpm.vm.strategies` builds predictions on top of single runs: Monte
  Carlo sampling, steady-state and wave extrapolation, corrected runs,
  ``--explain``, and the executors that spread runs over workers.

The kernel never imports the strategies (an import-linter contract checks it).

>>> from pevpm.vm.strategies.montecarlo import predict
"""
