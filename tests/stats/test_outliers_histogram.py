import numpy as np
import pytest

from pevpm.errors import PevpmError
from pevpm.stats.histogram import Histogram, automatic_bin_width
from pevpm.stats.outliers import THESIS_APPENDIX_RULE, THESIS_TEXT_RULE, split_outliers


def test_both_thesis_rules():
    times = np.r_[np.full(990, 1e-5), np.full(5, 7e-5), np.full(5, 2e-1)]
    text = split_outliers(times, *THESIS_TEXT_RULE)
    appendix = split_outliers(times, *THESIS_APPENDIX_RULE)
    assert text.threshold == pytest.approx(1e-4) and text.count == 5
    assert appendix.threshold == pytest.approx(5e-5) and appendix.count == 10


def test_rule_misses_outliers_when_more_than_one_percent():
    times = np.r_[np.full(980, 1e-5), np.full(20, 2e-1)]
    assert split_outliers(times, 99, 10).count == 0


def test_bad_rule_is_refused():
    with pytest.raises(PevpmError, match="percent"):
        split_outliers([1.0], percentile=0.0)


def test_fixed_bins_count_exactly():
    h = Histogram.of(np.array([0.0, 0.04e-3, 0.05e-3, 0.149e-3]), bin_width=0.05e-3)
    assert h.counts.tolist() == [2, 1, 1] and h.total == 4


def test_automatic_bins_scale_with_spread():
    rng = np.random.default_rng(1)
    narrow, wide = rng.normal(1, 0.01, 1000), rng.normal(1, 0.1, 1000)
    assert automatic_bin_width(wide) == pytest.approx(10 * automatic_bin_width(narrow), rel=0.3)
    hist = Histogram.of(narrow)
    body_bins = (np.percentile(narrow, 99) - narrow.min()) / hist.bin_width
    assert body_bins == pytest.approx(100) and hist.total == 1000
