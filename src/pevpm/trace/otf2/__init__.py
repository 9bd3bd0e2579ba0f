"""OTF2 I/O: the tracer's raw records written as an OTF2 archive
(:mod:`~pevpm.trace.otf2.write`) and any OTF2 archive with MPI records --
pevpm's or Score-P's -- read into a :class:`~pevpm.trace.events.Trace`
(:mod:`~pevpm.trace.otf2.read`, through the callbacks of
:mod:`~pevpm.trace.otf2.callbacks`).

>>> from pevpm.trace.otf2.write import function_name
>>> function_name("ALLREDUCE")
'MPI_Allreduce'
"""
