"""``pixel-recovery``'s SSIM against scikit-image's, and what it reports for images."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec import registry
from fedsec.errors import ValidationError
from fedsec.outcomes import Reconstruction
from fedsec.scoring.pixels import image_shape_of, ssim

skimage_metrics = pytest.importorskip("skimage.metrics")


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), height=st.integers(7, 20), width=st.integers(7, 20),
       noise=st.floats(0.0, 2.0))
def test_ssim_equals_scikit_image_on_images_in_minus_one_one(seed: int, height: int,
                                                              width: int, noise: float) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.uniform(-1, 1, size=(3, height, width))
    estimate = np.clip(truth + noise * rng.normal(size=truth.shape), -1, 1)
    ours = ssim(estimate, truth, 2.0)
    theirs = [skimage_metrics.structural_similarity(e, t, data_range=2.0)
              for e, t in zip(estimate, truth, strict=True)]
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_image_shapes_square_declared_or_none() -> None:
    assert image_shape_of(784, "auto") == (28, 28)
    assert image_shape_of(784, "16x49") == (16, 49)
    assert image_shape_of(785, "auto") is None
    assert image_shape_of(36, "auto") is None  # 6 x 6: smaller than the 7 x 7 window


def test_the_scorer_reports_ssim_for_square_images_and_its_baseline() -> None:
    rng = np.random.default_rng(0)
    truth = rng.uniform(-1, 1, size=(20, 64))
    key = "party/p1/value/test/inputs"
    estimate = np.clip(truth + 0.05 * rng.normal(size=truth.shape), -1, 1)
    baseline = np.repeat(truth.mean(axis=0, keepdims=True), 20, axis=0)
    reconstruction = Reconstruction(attack="a", threat="server", estimates={key: estimate},
                                    baseline={key: baseline})
    scores = registry.create("scorer", "pixel-recovery", {}).score(reconstruction, {key: truth})
    assert scores["ssim"] > 0.9 > 0.2 > scores["baseline_ssim"]
    flat = registry.create("scorer", "pixel-recovery", {"image_shape": "4x16"})
    assert "ssim" not in flat.score(reconstruction, {key: truth})  # 4 rows: below the window


def test_a_malformed_image_shape_names_the_form() -> None:
    with pytest.raises(ValidationError, match="HEIGHTxWIDTH"):
        registry.create("scorer", "pixel-recovery", {"image_shape": "28 by 28"})
