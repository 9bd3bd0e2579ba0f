"""One simulated run: program, engine, matching, scoreboard, sharing, collectives.

:func:`pevpm.vm.kernel.fastengine.simulate` is the entry point: it runs a
compiled model on the compiled core, or on the reference engine with a note
saying why.

>>> from pevpm.vm.kernel import fastengine
>>> fastengine.simulate.__name__
'simulate'
"""
