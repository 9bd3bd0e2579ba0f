"""Trace real MPI runs, store them as OTF2, replay them on a virtual machine.

``record`` runs a program under the PMPI tracer (``pmpi/pevpm_trace.c``,
built by ``build``), ``raw`` reads what the tracer wrote, ``otf2_write``
and ``otf2_read`` convert to and from OTF2 archives, ``events`` is the
in-memory trace both produce, ``replay`` turns a trace into a straight-line
PEVPM model and simulates it.
"""
