"""One 8-byte Allreduce on the perseus machine: CPU s of simulate, peak RSS, engine note.

    PYTHONPATH=<tree>/src .venv/bin/python allreduce_once.py RANKS
"""
import sys, time, resource
from pevpm.machine.presets import parse_machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel.fastengine import simulate
b = ModelBuilder(); b.collective("MPI_Allreduce", 8); model = b.build()
m = parse_machine("perseus")
t = time.process_time(); r = simulate(model, int(sys.argv[1]), m); t = time.process_time() - t
print(f"allreduce {sys.argv[1]} cpu {t:.2f} s rss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024:.0f} MiB note {r.engine_note}")
