"""Coloured cubes in a MIKASA RememberColor camera frame → the `cubes` rows the state observation carries.

For the hosted policy in rgb mode (remember_color_policy.py): it sees `image` and the base camera's calibration
(`camera_intrinsic` K, `camera_extrinsic` world→camera [R|t], OpenCV conventions), never a position from the
simulator. A pixel belongs to colour k when its chromaticity (the pixel divided by its largest channel) is within
`CHROMA_TOL` of MIKASA's RGBA colour k (remember_color_vla.py `COLOR_MAPPING`) and it is not dark; a colour with
at least `MIN_PIXELS` such pixels is on the table at the back-projection of their median pixel onto the plane
z = cube half-size. Measured on the real env (seed 3, 128×128 base camera): within 2 cm of the simulator's
positions; the table's wood (≈ (198, 125, 81)) matches no colour.
"""

from __future__ import annotations

import numpy as np

#: MIKASA-Robo's cube colours, in colour-index order (RGB in 0…1).
PALETTE = np.array(
    [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1], [0.5, 0, 0], [1, 0.5, 0], [0, 0.5, 0.5]], np.float64
)
CUBE_Z = 0.02
CHROMA_TOL = 0.3
MIN_BRIGHT = 60
MIN_PIXELS = 6


def colour_masks(image: np.ndarray, colours: int) -> np.ndarray:
    """[colours, H, W] bool: the pixels of each colour."""
    rgb = image.astype(np.float64)
    peak = rgb.max(axis=-1, keepdims=True)
    chroma = rgb / np.maximum(peak, 1.0)
    bright = peak[..., 0] >= MIN_BRIGHT
    targets = PALETTE[:colours] / PALETTE[:colours].max(axis=1, keepdims=True)
    dist = np.abs(chroma[None] - targets[:, None, None, :]).max(axis=-1)
    return (dist <= CHROMA_TOL) & bright[None]


def back_project(u: float, v: float, intrinsic: np.ndarray, extrinsic: np.ndarray, z: float = CUBE_Z) -> np.ndarray:
    """World (x, y, z) where the ray through pixel (u, v) meets the plane at height z."""
    rot, t = extrinsic[:, :3].astype(np.float64), extrinsic[:, 3].astype(np.float64)
    ray = rot.T @ np.linalg.solve(intrinsic.astype(np.float64), np.array([u, v, 1.0]))
    centre = -rot.T @ t
    if abs(ray[2]) < 1e-9:
        return np.array([np.nan, np.nan, z])
    return centre + ((z - centre[2]) / ray[2]) * ray


def cubes_from_image(image: np.ndarray, intrinsic: np.ndarray, extrinsic: np.ndarray, colours: int) -> np.ndarray:
    """[colours, 4] float32 rows (x, y, z, 1) for the colours seen, zeros for the others."""
    out = np.zeros((colours, 4), np.float32)
    for k, mask in enumerate(colour_masks(image, colours)):
        rows, cols = np.nonzero(mask)
        if rows.size >= MIN_PIXELS:
            xyz = back_project(float(np.median(cols)) + 0.5, float(np.median(rows)) + 0.5, intrinsic, extrinsic)
            if np.isfinite(xyz).all():
                out[k, :3] = xyz
                out[k, 3] = 1.0
    return out
