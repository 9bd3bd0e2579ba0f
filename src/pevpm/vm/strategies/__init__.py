"""Predictions built on single runs of the kernel (:mod:`pevpm.vm.kernel`).

Monte Carlo sampling (:mod:`.montecarlo`), steady-state and wave
extrapolation (:mod:`.steady`, :mod:`.wave`), corrected runs
(:mod:`.corrected`), ``--explain`` (:mod:`.explain`) and the executors
(:mod:`.executors`).

>>> from pevpm.vm.strategies import montecarlo
>>> montecarlo.predict.__name__
'predict'
"""
