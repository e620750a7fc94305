"""A candidate combining fast paths is held to the loosest bound any of its features sets."""

from omniqual.compare import ParityTolerance
from omniqual.compare.tolerance_combine import combined

EXACT = ParityTolerance.model_validate({"rationale": "same math", "image": {"require_exact": True}})
DTYPE = ParityTolerance.model_validate(
    {"rationale": "rounding", "image": {"min_psnr_db": 25.0, "min_ssim": 0.9}}
)
FP8 = ParityTolerance.model_validate({
    "rationale": "fp8", "image": {"min_psnr_db": 30.0, "min_ssim": 0.95, "max_abs_error": 40},
})  # fmt: skip


def test_one_feature_keeps_its_own_tolerance() -> None:
    assert combined([("dtype", DTYPE)]) is DTYPE


def test_exactness_holds_only_when_every_feature_requires_it() -> None:
    both = combined([("exact", EXACT), ("dtype", DTYPE)])
    assert both.image is not None
    assert not both.image.require_exact
    assert (both.image.min_psnr_db, both.image.min_ssim) == (25.0, 0.9)
    assert "exact: same math" in both.rationale and "dtype: rounding" in both.rationale


def test_the_loosest_bound_per_metric_wins() -> None:
    both = combined([("fp8", FP8), ("dtype", DTYPE)])
    assert both.image is not None
    assert (both.image.min_psnr_db, both.image.min_ssim) == (25.0, 0.9)
    assert both.image.max_abs_error == 40
