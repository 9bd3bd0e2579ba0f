"""Real run times of the three examples on this machine, as validation measures them.

    PYTHONPATH=src python benchmarks/examples_real_runs.py --repeats 5

Each configuration: one warm-up run, then --repeats recorded runs under
mpiexec; the table shows the timed section's wall time (mean +- sd, median,
min .. max) and the speedup of medians over the 1-rank run. -n 4 on a
2-core machine is oversubscribed. The load average is printed because other
work on the machine changes these times a lot.
"""

import argparse
import os

from pevpm.validate.runner import format_table, run_example

CONFIGURATIONS = [
    ("jacobi", [1, 2, 4], ["--size", "256", "--iterations", "10000"]),
    ("fft2d", [1, 2, 4], ["--size", "256", "--iterations", "500"]),
    ("bag_of_tasks", [1, 2], ["--jobs", "400", "--max-compute", "0.01", "--compute", "spin"]),
    ("bag_of_tasks", [1, 2, 4], ["--jobs", "400", "--max-compute", "0.01", "--compute", "sleep"]),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", help="run only this example")
    parser.add_argument("--max-n", type=int, default=4, help="skip larger process counts")
    args = parser.parse_args()
    for program, counts, program_args in CONFIGURATIONS:
        if args.only and program != args.only:
            continue
        load_before = os.getloadavg()[0]
        results = {n: run_example(program, n, program_args, repeats=args.repeats)
                   for n in counts if n <= args.max_n}
        print(f"\n{program} {' '.join(program_args)}  (seconds, {args.repeats} runs each; "
              f"1-min load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after)")
        print(format_table(results), flush=True)


if __name__ == "__main__":
    main()
