"""Per-object results of a matching as columns: what the objects dataset holds.

Both engines describe every object the same way, so their objects datasets
(``--objects DIR``, :mod:`geoeval.report.objects_dataset`) compare row for row:
per matcher, the object's status, its instance (named by the smallest reference
**position** in it: instances are disjoint, so the name is unique and the same
whichever process solved the instance), the instance's overlap, kind, score and
Mallows score (Özdemir et al. 2010, eq. 12; NaN when not computed).
"""

from __future__ import annotations

import numpy as np

from geoeval.matching.result import KINDS, Matching

#: Status codes of the ``<matcher>_status`` columns: reference rows are ``matched``
#: or ``missed``, submission rows ``matched`` or ``false_alarm``.
STATUS = ("matched", "missed", "false_alarm")
#: The per-matcher column suffixes, in order.
COLUMNS = ("status", "instance", "kind", "overlap", "score", "mallows")


def matching_columns(m: Matching, ref_pos: np.ndarray, sub_pos: np.ndarray,
                     mallows: np.ndarray | None = None
                     ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The per-object columns of one matcher for both sides.

    Parameters
    ----------
    m : Matching
        On object sets whose objects are at positions ``ref_pos`` / ``sub_pos``
        of the whole layers (increasing).
    ref_pos, sub_pos : numpy.ndarray of int64
    mallows : numpy.ndarray, optional
        The instances' Mallows scores (NaN where undefined), when computed.

    Returns
    -------
    reference, submission : dict of numpy.ndarray
        ``status`` (object array of :data:`STATUS`), ``instance`` (int64, the
        smallest reference position of the instance, -1 for none), ``kind``
        (object, ``None`` for none), ``overlap`` and ``score`` (float, NaN for none).
    """
    a = m.arrays
    n = len(a)
    key = np.asarray(ref_pos, np.int64)[a.ref_idx[a.ref_ptr[:-1]]] if n else \
        np.zeros(0, np.int64)
    kinds = np.asarray(KINDS + (None,), dtype=object)
    mal = np.full(n, np.nan) if mallows is None else np.asarray(mallows, float)
    out = []
    for size, idx, inst, miss in ((len(ref_pos), a.ref_idx, a.ref_instance(), 1),
                                  (len(sub_pos), a.sub_idx, a.sub_instance(), 2)):
        which = np.full(size, -1, np.int64)
        which[idx] = inst
        has = which >= 0
        status = np.asarray(STATUS, dtype=object)[np.where(has, 0, miss)]
        safe = np.where(has, which, 0)
        cols = {
            "status": status,
            "instance": np.where(has, key[safe] if n else -1, -1).astype(np.int64),
            "kind": kinds[np.where(has, a.kind[safe] if n else -1, -1)],
            "overlap": np.where(has, a.overlap[safe] if n else np.nan, np.nan),
            "score": np.where(has, a.score[safe] if n else np.nan, np.nan),
            "mallows": np.where(has, mal[safe] if n else np.nan, np.nan),
        }
        out.append(cols)
    return out[0], out[1]
