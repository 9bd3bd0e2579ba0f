"""Readable views of a profile: the ``profile show`` listing and the CSV export.

The CSV has one row per block in the layout IMB and OSU users know: message
size, repetitions, then min / avg / max and percentiles in microseconds.

>>> with Profile.open("m.db") as prof:          # doctest: +SKIP
...     write_csv(prof, sys.stdout)
test,variant,nxp,bytes,repetitions,samples,t_min[usec],t_avg[usec],...
"""

from __future__ import annotations

import csv

from pevpm.profile.builtin import origin_of
from pevpm.profile.store import Profile

CSV_PERCENTILES = (50, 90, 95, 99)
CSV_HEADER = (
    ["test", "variant", "nxp", "bytes", "repetitions", "samples",
     "t_min[usec]", "t_avg[usec]", "t_max[usec]"]
    + [f"t_p{q}[usec]" for q in CSV_PERCENTILES]
    + ["outliers"]
)


def csv_rows(profile: Profile, test: str | None = None, nxp=None) -> list[list]:
    """One row per block (see :data:`CSV_HEADER`), times in microseconds."""
    rows = []
    for key in profile.blocks(test=test, nxp=nxp):
        info = profile.block_info(key)
        summary = profile.summary(key)
        rows.append(
            [key.test, key.variant, key.nxp, key.size, info["reps"], summary.count,
             f"{summary.min * 1e6:.3f}", f"{summary.mean * 1e6:.3f}", f"{summary.max * 1e6:.3f}"]
            + [f"{summary.quantiles[q] * 1e6:.3f}" for q in CSV_PERCENTILES]
            + [summary.outliers]
        )
    return rows


def write_csv(profile: Profile, stream, test: str | None = None, nxp=None) -> int:
    """Write the CSV export to a text stream; returns the number of rows."""
    writer = csv.writer(stream)
    writer.writerow(CSV_HEADER)
    rows = csv_rows(profile, test=test, nxp=nxp)
    writer.writerows(rows)
    return len(rows)


def describe(profile: Profile) -> str:
    """Multi-line text listing of a profile: machine, runs with clock error, blocks per test."""
    machine = profile.machine
    lines = [
        f"profile {profile.path}",
        (f"machine {machine.name or '?'}: hosts {', '.join(machine.hosts) or '-'}; "
         f"{machine.mpi_library} ({machine.mpi_version})"),
    ]
    origin = origin_of(profile)
    lines.append(f"origin: {origin.summary()}")
    if origin.purpose:
        lines.append(f"good for: {origin.purpose}")
    for run in machine.runs:
        state = "finished" if run.finished else "incomplete (use --resume)"
        lines.append(
            f"run {run.id}: {run.nxp}, clock {run.clock}, sync {run.sync_method} "
            f"(resend limit {run.resend_limit}), max sync error "
            f"{run.max_sync_error * 1e6:.2f} us, started {run.started}, {state}"
        )
    groups: dict[tuple[str, str, str], list[int]] = {}
    for key in profile.blocks():
        groups.setdefault((key.test, key.variant, key.nxp), []).append(key.size)
    lines.append(f"{'test':<16}{'nxp':<7}{'sizes':<28}{'blocks':>6}  median of smallest size")
    for (test, variant, nxp), sizes in groups.items():
        median = profile.summary(test, sizes[0], nxp=nxp, variant=variant).median
        span = f"{sizes[0]}..{sizes[-1]} B" if len(sizes) > 1 else f"{sizes[0]} B"
        lines.append(f"{test + variant:<16}{nxp:<7}{span:<28}{len(sizes):>6}  "
                     f"{median * 1e6:.2f} us")
    fits = len(profile.stored_fits())
    calibration = len(profile.calibration())
    lines.append(f"{fits} stored fits, {calibration} calibration values")
    return "\n".join(lines)
