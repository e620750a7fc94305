from __future__ import annotations

import numpy as np
import pytest

from omniqual.loadgen.trend import fit_trend, student_t_quantile

# Standard two-sided table values (t_{0.975} and t_{0.995}), to the table's 4 decimals.
T_TABLE = [
    (1, 12.7062, 63.6567),
    (2, 4.3027, 9.9248),
    (3, 3.1824, 5.8409),
    (5, 2.5706, 4.0321),
    (10, 2.2281, 3.1693),
    (20, 2.0860, 2.8453),
    (30, 2.0423, 2.7500),
    (60, 2.0003, 2.6603),
    (120, 1.9799, 2.6174),
    (1000, 1.9623, 2.5808),
]


@pytest.mark.parametrize(("df", "q975", "q995"), T_TABLE)
def test_t_quantile_matches_table(df: int, q975: float, q995: float) -> None:
    assert student_t_quantile(0.975, df) == pytest.approx(q975, abs=6e-5)
    assert student_t_quantile(0.995, df) == pytest.approx(q995, abs=6e-5)
    assert student_t_quantile(0.025, df) == pytest.approx(-q975, abs=6e-5)


def test_t_quantile_is_continuous_across_the_approximation_switch() -> None:
    exact, approx = student_t_quantile(0.9995, 200), student_t_quantile(0.9995, 201)
    assert exact > approx  # quantiles shrink with df
    assert exact - approx < 1e-3
    assert student_t_quantile(0.5, 7) == 0.0
    with pytest.raises(ValueError):
        student_t_quantile(1.0, 5)


def test_slope_ci_contains_true_slope_on_synthetic_data() -> None:
    rng = np.random.default_rng(4)
    t = np.linspace(0, 3600, 120)  # an hour of samples every 30 s
    rss = 2.0e9 + 150.0 * t + rng.normal(0, 5.0e5, t.size)  # 150 B/s leak under noise
    fit = fit_trend(t.tolist(), rss.tolist(), confidence=0.99)
    assert fit.ci_low < 150.0 < fit.ci_high
    assert fit.excludes_zero()
    assert fit.slope == pytest.approx(150.0, rel=0.2)
    assert fit.n == 120 and fit.confidence == 0.99


def test_slope_ci_coverage_is_close_to_nominal() -> None:
    rng = np.random.default_rng(10)
    x = np.arange(12, dtype=float)
    covered = 0
    trials = 400
    for _ in range(trials):
        y = 3.0 - 0.5 * x + rng.normal(0, 2.0, x.size)
        fit = fit_trend(x.tolist(), y.tolist(), confidence=0.95)
        covered += fit.ci_low <= -0.5 <= fit.ci_high
    # Binomial sd at 95 % over 400 trials is ~1.1 %; allow about 3 sd either way.
    assert 0.915 <= covered / trials <= 0.985


def test_flat_series_is_not_flagged_and_bad_input_raises() -> None:
    fit = fit_trend([0, 1, 2, 3, 4], [10, 11, 10, 11, 10])
    assert not fit.excludes_zero()
    with pytest.raises(ValueError, match="at least 3"):
        fit_trend([0, 1], [1, 2])
    with pytest.raises(ValueError, match="all x values are equal"):
        fit_trend([1, 1, 1], [1, 2, 3])
