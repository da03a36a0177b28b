"""Label co-occurrence of two label arrays in memory, block by block on a Dask cluster.

Labelled rasters read from files are scanned window by window on the workers
themselves (:func:`geoeval.io.windowed.scan` within
:func:`geoeval.parallel.remote`); label arrays already in memory are cut into
blocks here, scattered to the workers and counted there with the same kernel,
:func:`geoeval.io.windowed.scan_labels` (label pairs with pixel counts, and the
pixels labelled on either side), then merged in the client
(:func:`~geoeval.io.windowed.merge_scans`) into the same
:class:`~geoeval.overlap.Overlap` as the local engine
(:func:`geoeval.overlap.overlap_from_scan`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geoeval.grid import windows
from geoeval.io.windowed import Scan, merge_scans, scan_labels
from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap, overlap_from_scan

#: Block side (pixels) of the map over the grid.
WINDOW = 2048


def pair_scan(ref: np.ndarray, sub: np.ndarray, ref_background: Any,
              sub_background: Any) -> Scan:
    """Label pairs of one block pair (the task each worker runs)."""
    return scan_labels([ref, sub], [ref_background, sub_background], per_label=False)


def dask_cooccurrence(reference: ObjectSet, submission: ObjectSet, client: Any,
                      size: int | None = None) -> Overlap:
    """The co-occurrence overlap of two label arrays on one grid, blocks mapped on the
    cluster (``size`` pixels a side, default :data:`WINDOW`)."""
    rg, sg = reference.grid, submission.grid
    assert rg is not None and sg is not None
    side = size or WINDOW
    wins = [(slice(r0, r1), slice(c0, c1))
            for r0, r1, c0, c1 in windows(rg.shape, (side, side), side * side)]
    # the blocks are sent as data (scattered), not inside the task graph
    ref_blocks = client.scatter([rg.labels[w] for w in wins], hash=False)
    sub_blocks = client.scatter([sg.labels[w] for w in wins], hash=False)
    futures = client.map(pair_scan, ref_blocks, sub_blocks, [rg.background] * len(wins),
                         [sg.background] * len(wins), pure=False)
    parts = client.gather(futures)
    found = merge_scans(parts) if parts else pair_scan(
        np.zeros((0, 0), rg.dtype), np.zeros((0, 0), sg.dtype), rg.background, sg.background)
    return overlap_from_scan(reference, submission, found)
