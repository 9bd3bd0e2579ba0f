"""Fit every block of a machine profile and store the fits back in it.

For each block (test, variant, size, n x p) the non-outlier times (the
outlier rule the benchmark used) are fitted with every candidate family,
ranked by AIC, tested for goodness of fit on a 500-point subsample, and the
per-rank series tested for independence.  Every family's parameters and
goodness go into the profile's ``fits`` table; ``goodness["rank"] == 1``
marks the best, which :class:`pevpm.machine.profile_comm.ProfileCommModel`
uses with ``source="fitted"``.

>>> fits = fit_profile("machine.db", tests=["isend"]).blocks    # doctest: +SKIP
>>> fits[0].best.family                                          # doctest: +SKIP
'pearson5'
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pevpm.errors import ModelError, ProfileError
from pevpm.profile.store import BlockKey, Profile, ProfileWriter, block_contention
from pevpm.progress import progress_bar
from pevpm.stats.fitting import (
    DEFAULT_FAMILIES,
    FamilySelection,
    FitResult,
    IndependenceResult,
    check_families,
    independence_by_rank,
    select_family,
)
from pevpm.stats.trends import PearsonVTrend, TrendPoint

#: Point-to-point tests, for which contention trends make sense.
POINT_TO_POINT_TESTS = ("isend", "send", "isendlocal", "isendduplex", "sendrecv")


@dataclass(frozen=True)
class BlockFit:
    """The fits of one block, with the data they were made from."""

    key: BlockKey
    selection: FamilySelection
    independence: IndependenceResult | None
    data: np.ndarray
    outliers_excluded: int

    @property
    def best(self) -> FitResult:
        return self.selection.best


@dataclass(frozen=True)
class ProfileFits:
    """What :func:`fit_profile` did: the fitted blocks and the skipped ones (label -> why)."""

    blocks: list[BlockFit]
    skipped: dict[str, str]


def _block_seed(seed: int, key: BlockKey) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, zlib.crc32(f"{key.label} {key.variant}".encode())])


def fit_block(
    profile: Profile, key: BlockKey, families: Sequence[str] = DEFAULT_FAMILIES, seed: int = 0
) -> BlockFit:
    """Fit one block (its non-outlier times) with every family in ``families``."""
    by_rank = profile.samples(key, by_rank=True)
    threshold = profile.summary(key).outlier_threshold
    keep = by_rank <= threshold if threshold > 0 else np.ones_like(by_rank, dtype=bool)
    data = by_rank[keep]
    selection = select_family(data, families, random_state=_block_seed(seed, key))
    try:
        independent = independence_by_rank([row[mask] for row, mask in zip(by_rank, keep)])
    except ModelError:
        independent = None
    return BlockFit(key, selection, independent, data, int(by_rank.size - data.size))


def goodness_record(block: BlockFit, fit: FitResult) -> dict:
    """What is stored beside a fit's parameters."""
    record = {
        "rank": 1 + block.selection.fits.index(fit),
        "aic": fit.aic,
        "loglik": fit.loglik,
        "n_fit": fit.n_fit,
        "ks_stat": fit.ks_stat,
        "ks_pvalue": fit.ks_pvalue,
        "ad_stat": fit.ad_stat,
        "ad_pvalue": fit.ad_pvalue,
        "n_gof": fit.n_gof,
        "outliers_excluded": block.outliers_excluded,
    }
    if block.independence is not None:
        record.update(
            runs_pvalue=block.independence.runs_pvalue,
            lag1=block.independence.lag1,
            lag1_pvalue=block.independence.lag1_pvalue,
            independent=block.independence.independent,
        )
    return record


def fit_profile(
    path,
    *,
    tests: Sequence[str] | None = None,
    nxp: str | None = None,
    families: Sequence[str] = DEFAULT_FAMILIES,
    seed: int = 0,
    store: bool = True,
    progress: bool = False,
) -> ProfileFits:
    """Fit the blocks of the profile at ``path`` (optionally some tests / one
    placement) and, with ``store``, write every fit into its ``fits`` table.

    A block whose data cannot be fitted (too few or identical samples) is
    skipped, with the reason, rather than stopping the rest.
    """
    path = Path(path)
    check_families(families)
    with Profile.open(path) as profile:
        keys = [key for key in profile.blocks(nxp=nxp) if tests is None or key.test in tests]
        if not keys:
            have = sorted({key.test for key in profile.blocks()})
            wanted = ", ".join(tests) if tests else "any test"
            where = f" at {nxp}" if nxp else ""
            raise ProfileError(
                f"no blocks for {wanted}{where}; the profile has: {', '.join(have) or 'nothing'}",
                where=str(path),
            )
        blocks, skipped = [], {}
        bar = progress_bar(len(keys), "fitting", "block", quiet_close=True) if progress else None
        for key in keys:
            try:
                blocks.append(fit_block(profile, key, families, seed))
            except ModelError as exc:
                skipped[key.label] = str(exc)
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
    if store:
        with ProfileWriter.open(path) as writer:
            for block in blocks:
                for fit in block.selection.fits:
                    writer.store_fit(block.key, fit.family, fit.params, goodness_record(block, fit))
    return ProfileFits(blocks, skipped)


@dataclass(frozen=True)
class TrendGroup:
    """Pearson V fits of one point-to-point test within or between nodes."""

    test: str
    intra_node: bool
    points: tuple[TrendPoint, ...]
    trend: PearsonVTrend

    @property
    def label(self) -> str:
        return f"{self.test} {'intra-node' if self.intra_node else 'inter-node'}"


def pearson_trends(blocks: Sequence[BlockFit]) -> list[TrendGroup]:
    """Pearson V trends per point-to-point test and node class, from block fits."""
    groups: dict[tuple[str, bool], list[TrendPoint]] = {}
    for block in blocks:
        key = block.key
        fit = next((f for f in block.selection.fits if f.family == "pearson5"), None)
        if fit is None or key.test not in POINT_TO_POINT_TESTS or key.variant:
            continue
        point = TrendPoint(key.size, block_contention(key), fit.distribution)
        groups.setdefault((key.test, key.n == 1), []).append(point)
    return [
        TrendGroup(test, intra, tuple(points), PearsonVTrend.fit(points))
        for (test, intra), points in sorted(groups.items())
    ]
