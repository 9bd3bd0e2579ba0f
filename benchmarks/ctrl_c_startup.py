"""Ctrl-C in the first moments of a ``pevpm`` command (issue 30): how often it ends
cleanly (``pevpm: interrupted``, status 130), with Python's own traceback (the
interpreter had not reached pevpm's code yet), or not at all (it came after the
command finished).

Starts ``pevpm show MODEL`` (the console script, ``python -m pevpm``, and for
comparison the former entry point ``pevpm.cli:run``) and sends SIGINT after
each delay from 0 to ``--until`` milliseconds in ``--step`` ms steps,
``--repeats`` times each; prints the counts and the latest delay that still
gave a traceback.

    PYTHONPATH=src python benchmarks/ctrl_c_startup.py [--until 300 --step 5 --repeats 4]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ENTRY_POINTS = {
    "pevpm (console script)": [str(Path(sys.executable).with_name("pevpm"))],
    "python -m pevpm": [sys.executable, "-m", "pevpm"],
    "former pevpm.cli:run": [sys.executable, "-c",
                             "import sys; from pevpm.cli import run; sys.argv[0] = 'pevpm'; "
                             "run()"],
}


def outcome(command: list[str], delay: float) -> str:
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(delay)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    text = err.decode("utf-8", "replace")
    if "Traceback" in text:
        return "traceback"
    if child.returncode == 130 and text == "pevpm: interrupted\n":
        return "clean"
    if child.returncode == 0:
        return "finished"
    return f"other (status {child.returncode}: {text.strip()[:60]!r})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--until", type=float, default=300, help="last delay, ms (300)")
    parser.add_argument("--step", type=float, default=5, help="delay step, ms (5)")
    parser.add_argument("--repeats", type=int, default=4, help="tries per delay (4)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp, "m.c")
        model.write_text("// PEVPM Serial time = 1e-6\n")
        delays = [i * args.step / 1000 for i in range(int(args.until / args.step) + 1)]
        env_note = os.environ.get("PYTHONPATH", "")
        print(f"delays 0..{args.until:g} ms every {args.step:g} ms, {args.repeats} tries each; "
              f"PYTHONPATH={env_note!r}")
        for name, command in ENTRY_POINTS.items():
            counts, last_traceback = Counter(), None
            for delay in delays:
                for _ in range(args.repeats):
                    kind = outcome([*command, "show", str(model)], delay)
                    counts[kind] += 1
                    if kind == "traceback":
                        last_traceback = delay
            latest = "none" if last_traceback is None else f"{last_traceback * 1000:.0f} ms"
            print(f"{name}: {dict(counts)}; latest delay with a traceback: {latest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
