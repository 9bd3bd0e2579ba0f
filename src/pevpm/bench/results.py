"""Readable views of a profile: the ``profile show`` listing and the CSV export.

The CSV has one row per block in the layout IMB and OSU users know: message
size, repetitions, then min / avg / max and percentiles in microseconds.

>>> with Profile.open("m.db") as prof:          # doctest: +SKIP
...     write_csv(prof, sys.stdout)
test,variant,nxp,bytes,repetitions,samples,t_min[usec],t_avg[usec],...
"""

from __future__ import annotations

import csv

from pevpm.host import BUSY_THRESHOLD
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
            f"run {run.id}: {run.nxp}, {run.binding} timing loops, clock {run.clock}, sync {run.sync_method} "
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
    lines.append(eager_line(origin.eager))
    lines.append(starts_line(profile))
    fits = len(profile.stored_fits())
    calibration = len(profile.calibration())
    lines.append(f"{fits} stored fits, {calibration} calibration values")
    lines.append(conditions_note(profile) or "machine load while measuring: not recorded")
    lines.append(stability_note(profile))
    return "\n".join(lines)


def starts_line(profile: Profile) -> str:
    """One line naming how each test's repetitions were started (``chain``,
    ``barrier``, ``time``, with any ``+gap``), tests grouped by start rule.

    >>> from pevpm.profile.store import BlockKey
    >>> class Stub:
    ...     modes = {"isend": "chain", "send": "chain", "bcast": "barrier"}
    ...     def blocks(self):
    ...         return [BlockKey(t, "", 0, 1, 2) for t in self.modes]
    ...     def block_info(self, key):
    ...         return {"start_mode": self.modes[key.test]}
    >>> starts_line(Stub())
    'repetitions started: barrier (bcast); chain (isend, send)'
    """
    tests: dict[str, set[str]] = {}
    for key in profile.blocks():
        mode = profile.block_info(key)["start_mode"]
        tests.setdefault(mode, set()).add(key.test + key.variant)
    shown = "; ".join(f"{mode} ({', '.join(sorted(names))})"
                      for mode, names in sorted(tests.items()))
    return f"repetitions started: {shown or 'no blocks'}"


def stability_note(profile: Profile) -> str:
    """One line on the blocks whose halves differed (:mod:`pevpm.bench.stability`).

    >>> from pevpm.profile.store import BlockKey, BlockStability
    >>> class Stub:
    ...     def stability(self):
    ...         return {BlockKey("isend", "", 0, 1, 4): BlockStability(1, 1.5, 0, 1, .1, .001),
    ...                 BlockKey("isend", "", 64, 1, 4): BlockStability(1, 1, 1, 0, .1, .001)}
    >>> stability_note(Stub())
    'stability: 1 of 2 blocks unstable after re-measuring (isend 0 B 1x4 halves +50%)'
    """
    verdicts = profile.stability()
    if not verdicts:
        return "stability: not checked (profile from before the check)"
    unstable = [(key, v) for key, v in verdicts.items() if not v.stable]
    if not unstable:
        return f"stability: all {len(verdicts)} blocks stable (halves agree)"
    worst = sorted(unstable, key=lambda item: -abs(item[1].shift))[:3]
    shown = ", ".join(f"{key.label} {v.check} {v.shift:+.0%}" for key, v in worst)
    return (f"stability: {len(unstable)} of {len(verdicts)} blocks unstable after "
            f"re-measuring ({shown})")


def eager_line(eager: int | None) -> str:
    """What ``profile show`` says of the eager limit ``pevpm bench`` measured.

    >>> eager_line(8112)
    'eager limit: 8,112 B (measured: the largest blocking send that returned before its receive was posted)'
    >>> eager_line(None).startswith("eager limit: not measured")
    True
    """
    if eager is None:
        return ("eager limit: not measured (predictions assume MPICH's nominal 65,536 B; "
                "--machine PROFILE:eager=BYTES sets it)")
    return (f"eager limit: {eager:,} B (measured: the largest blocking send that returned "
            "before its receive was posted)")


def conditions_note(profile: Profile, quiet_too: bool = True) -> str | None:
    """One line on how busy the machine was while the profile's blocks ran, or
    ``None`` when no block recorded it (older or synthetic profiles) or, with
    ``quiet_too=False``, when none was disturbed.

    >>> from pevpm.profile.store import BlockConditions, BlockKey
    >>> class Stub:
    ...     def blocks(self):
    ...         return [BlockKey("isend", "", 0, 1, 2), BlockKey("isend", "", 64, 1, 2)]
    ...     def block_conditions(self, key):
    ...         return BlockConditions(0.05 if key.size == 0 else 1.3, 2.4, 2)
    >>> for part in conditions_note(Stub()).split("; "):
    ...     print(part)
    machine load while measuring: 1 of 2 blocks ran while other processes used more than 0.2 cores (worst 1.30 cores, isend 64 B 1x2)
    re-measure them on a quiet machine
    """
    recorded = [(key, c) for key in profile.blocks()
                if (c := profile.block_conditions(key)) is not None]
    if not recorded:
        return None
    busy = [(key, c) for key, c in recorded if c.busy]
    if not busy:
        if not quiet_too:
            return None
        worst = max(c.others for _, c in recorded)
        return (f"machine load while measuring: quiet (other processes used at most "
                f"{worst:.2f} cores during {len(recorded)} blocks)")
    key, worst = max(busy, key=lambda item: item[1].others)
    return (f"machine load while measuring: {len(busy)} of {len(recorded)} blocks ran while "
            f"other processes used more than {BUSY_THRESHOLD} cores (worst "
            f"{worst.others:.2f} cores, {key.label}); re-measure them on a quiet machine")
