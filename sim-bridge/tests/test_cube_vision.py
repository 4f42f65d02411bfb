"""cube_vision on a frame recorded from the real RememberColor3-VLA-v0 (tests/fixtures/record_mikasa.py)."""

from __future__ import annotations

import numpy as np
import pytest

from fakes.mikasa_fake import FIXTURES
from imep_sim_bridge.cube_vision import back_project, colour_masks, cubes_from_image


@pytest.fixture(scope="module")
def frame():
    return dict(np.load(FIXTURES / "RememberColor3-VLA-v0.rgb.frame.npz"))


def test_the_cubes_are_found_within_2_5_cm_of_the_simulators_positions(frame) -> None:
    rows = cubes_from_image(frame["image"], frame["intrinsic"], frame["extrinsic"], 3)
    assert rows.dtype == np.float32 and rows[:, 3].tolist() == [1.0, 1.0, 1.0]
    err = np.linalg.norm(rows[:, :2] - frame["cubes"][:, :2], axis=1)
    assert (err < 0.025).all(), err


def test_the_table_matches_no_colour_and_a_missing_colour_is_zeros(frame) -> None:
    masks = colour_masks(frame["image"], 3)
    assert 6 <= masks.sum() < 0.02 * masks[0].size * 3  # a few dozen cube pixels, not the wooden table
    image = frame["image"].copy()
    image[masks[1]] = (198, 125, 81)  # paint the lime cube over with wood
    rows = cubes_from_image(image, frame["intrinsic"], frame["extrinsic"], 3)
    assert rows[1].tolist() == [0.0] * 4 and rows[0, 3] == rows[2, 3] == 1.0


def test_back_projection_inverts_the_camera(frame) -> None:
    k, rt = frame["intrinsic"].astype(np.float64), frame["extrinsic"].astype(np.float64)
    world = np.array([0.05, -0.12, 0.02])
    cam = rt[:, :3] @ world + rt[:, 3]
    u, v, _ = (k @ cam) / cam[2]
    np.testing.assert_allclose(back_project(u, v, k, rt), world, atol=1e-9)
