"""The MPIBench plot page: one PNG per test, variant and placement (thesis fig. 11).

Three panels: (1) minimum, mean and a per-rank subsample of the raw times
against message size; (2) the distribution at each size as slices in 3-D;
(3) outliers on a logarithmic time axis with the minimum, mean and outlier
boundary per size.

>>> from pevpm.profile.store import Profile, default_profile_path
>>> with Profile.open(default_profile_path()) as prof:      # doctest: +SKIP
...     plot_profile(prof, "plots", test="isend")
[PosixPath('plots/vm.1x2.isend.0-64K.png'), ...]
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pevpm.profile.store import BlockKey, Profile
from pevpm.report.pyplot import plt, save

SUBSAMPLES_PER_RANK = 5


def _groups(profile: Profile, test: str | None) -> dict[tuple[str, str, str], list[BlockKey]]:
    groups: dict[tuple[str, str, str], list[BlockKey]] = {}
    for key in profile.blocks(test=test):
        groups.setdefault((key.test, key.variant, key.nxp), []).append(key)
    return groups


def _size_label(size: int) -> str:
    return f"{size // 1024}K" if size >= 1024 and size % 1024 == 0 else str(size)


def plot_page(profile: Profile, keys: list[BlockKey], path, seed: int = 0) -> Path:
    """Draw the three-panel page for ``keys`` (one test/variant/placement) into ``path``."""
    rng = np.random.default_rng(seed)
    sizes = np.array([key.size for key in keys])
    summaries = [profile.summary(key) for key in keys]
    us = 1e6
    fig = plt.figure(figsize=(8.3, 11.7))
    first = keys[0]
    machine = profile.machine.name or "machine"
    fig.suptitle(f"{machine}: {first.nxp} ({first.n} nodes x {first.p} per node)\n"
                 f"{first.test}{first.variant}, sizes {_size_label(sizes[0])}-"
                 f"{_size_label(sizes[-1])} B, {summaries[0].count} samples per size")

    overview = fig.add_subplot(3, 1, 1)
    for key, size in zip(keys, sizes):
        raw = profile.samples(key, by_rank=True)
        take = min(SUBSAMPLES_PER_RANK, raw.shape[1])
        picks = np.concatenate([rng.choice(row, size=take, replace=False) for row in raw])
        overview.plot(np.full(picks.size, size), picks * us, ".", color="0.6", ms=3)
    overview.plot(sizes, [s.min * us for s in summaries], "o-", label="min")
    overview.plot(sizes, [s.mean * us for s in summaries], "s-", label="mean")
    overview.plot([], [], ".", color="0.6", label="subsamples")
    overview.set_xlabel("message size (bytes)")
    overview.set_ylabel("time (us)")
    overview.legend(loc="upper left")

    slices = fig.add_subplot(3, 1, 2, projection="3d")
    for key, size in zip(keys, sizes):
        hist = profile.histogram(key)
        if hist.counts.size == 0:
            continue
        centres = (hist.edges[:-1] + hist.edges[1:]) / 2 * us
        slices.plot(centres, np.full(centres.size, size), hist.counts / hist.total)
    slices.set_xlabel("time (us)")
    slices.set_ylabel("size (bytes)")
    slices.set_zlabel("fraction")

    tails = fig.add_subplot(3, 1, 3)
    tails.plot(sizes, [s.min * us for s in summaries], "o-", label="min")
    tails.plot(sizes, [s.mean * us for s in summaries], "s-", label="mean")
    bounds = [s.outlier_threshold * us for s in summaries]
    tails.plot(sizes, bounds, "k--", label="outlier boundary")
    for key, size in zip(keys, sizes):
        outliers = profile.outliers(key)
        if outliers.size:
            tails.plot(np.full(outliers.size, size), outliers * us, "rx")
    tails.plot([], [], "rx", label="outliers")
    tails.set_yscale("log")
    tails.set_xlabel("message size (bytes)")
    tails.set_ylabel("time (us, log)")
    tails.legend(loc="best")

    return save(fig, path)


def plot_profile(profile: Profile, directory, test: str | None = None) -> list[Path]:
    """Write one page per test/variant/placement as ``<machine>.<nxp>.<test>.<min>-<max>.png``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    machine = profile.machine.name or "machine"
    written = []
    for (name, variant, nxp), keys in _groups(profile, test).items():
        span = f"{_size_label(keys[0].size)}-{_size_label(keys[-1].size)}"
        path = directory / f"{machine}.{nxp}.{name}{variant}.{span}.png"
        written.append(plot_page(profile, keys, path))
    return written
