"""Trace real MPI runs, store them as OTF2, replay them on a virtual machine,
extract models from them: four pipelines, a subpackage each.

``record`` runs a program under the PMPI tracer (``record/pmpi/pevpm_trace.c``,
built by ``record.build``); ``raw`` reads what the tracer wrote; ``otf2``
converts it to an OTF2 archive and reads any archive back; ``events`` is the
in-memory trace every pipeline shares; ``replay`` turns a trace into a
straight-line PEVPM model and simulates it; ``extract`` turns traces into a
compressed model that scales.  The layers (``pyproject.toml``): ``record`` and
``extract`` above ``otf2`` and ``replay``, above ``events`` and ``raw``.
"""
