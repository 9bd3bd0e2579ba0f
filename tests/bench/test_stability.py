"""Block stability: the halves test, the verdict stored per block, predict's note."""

import numpy as np
import pytest
from bench_helpers import write_pt2pt_profile

from pevpm.bench.stability import P_VALUE, SHIFT, compare_halves
from pevpm.machine.profile_comm import ProfileCommModel
from pevpm.profile.store import BlockKey, BlockStability, Profile, ProfileWriter


def test_a_shift_between_halves_is_flagged_and_noise_is_not():
    """Seeded normal noise (1% spread) with a 20% step half-way is unstable; the same
    noise without the step, or with a 5% step (below SHIFT), is stable."""
    rng = np.random.default_rng(1)
    noise = rng.normal(1e-6, 1e-8, size=(2, 400))
    stepped = noise.copy()
    stepped[:, 200:] *= 1.2
    small = noise.copy()
    small[:, 200:] *= 1.05
    assert compare_halves(noise).stable
    verdict = compare_halves(stepped)
    assert not verdict.stable and verdict.p_value < P_VALUE and verdict.shift > SHIFT
    assert compare_halves(small).stable and compare_halves(small).p_value < P_VALUE


def test_unstable_blocks_are_named_in_predictions(tmp_path):
    path = tmp_path / "m.db"
    write_pt2pt_profile(path, "c", costs=False)
    with ProfileWriter.open(path) as writer:
        writer.store_stability(BlockKey("isend", "", 1024, 1, 2),
                               BlockStability(1e-6, 1.4e-6, 1e-12, 1, SHIFT, P_VALUE))
        writer.store_stability(BlockKey("isend", "", 0, 1, 2),
                               BlockStability(1e-6, 1.01e-6, 0.5, 0, SHIFT, P_VALUE))
    with Profile.open(path) as prof:
        assert [v.stable for v in prof.stability().values()] == [True, False]
    notes = [n for n in ProfileCommModel.from_profile(path).notes if n.startswith("unstable")]
    assert len(notes) == 1 and "1 point-to-point block(s)" in notes[0]
    assert "isend 1024 B 1x2 (halves +40%)" in notes[0]


def test_the_numpy_test_agrees_with_scipy():
    """Seeded normal samples rounded to 0.1 (ties), shifted by 0-0.4 sd: the p-value is
    scipy's asymptotic Mann-Whitney p within 1e-9 relative."""
    from scipy.stats import mannwhitneyu

    from pevpm.bench.stability import mann_whitney_p

    rng = np.random.default_rng(3)
    for shift in (0.0, 0.1, 0.2, 0.4):
        a, b = rng.normal(0, 1, 300).round(1), rng.normal(shift, 1, 300).round(1)
        expected = mannwhitneyu(a, b, alternative="two-sided", method="asymptotic").pvalue
        assert mann_whitney_p(a, b) == pytest.approx(expected, rel=1e-9)
