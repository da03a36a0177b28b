"""The ``--id-field`` check of a layer read by pieces on a Dask cluster: every id
unique over the whole layer, as the in-memory reader requires, without the client
seeing the ids (buckets by hash, one small summary a bucket)."""

from __future__ import annotations

from typing import Any

import numpy as np

from geoeval.engine.parts import Part, bucket
from geoeval.errors import FieldError
from geoeval.parallel import gc_paused

#: Ids per bucket of the ``--id-field`` uniqueness check (buckets by id hash).
IDS_PER_BUCKET = 5_000_000


def _comparable_ids(ids: np.ndarray) -> np.ndarray:
    """Ids as the in-memory reader compares them (objects as text)."""
    return ids.astype(str) if ids.dtype == object else ids


@gc_paused
def id_buckets(part: Part, n: int) -> dict[int, np.ndarray]:
    """The ids of every feature of a piece (skipped ones too) cut into ``n`` buckets by
    hash: equal ids, whatever their piece, fall in one bucket (numbers are hashed as
    floats, so ``5`` and ``5.0`` of two files meet)."""
    import pandas as pd

    ids = _comparable_ids(part.all_ids if part.all_ids is not None else part.ids)
    if not ids.size:
        return {}
    hashed = ids.astype(np.float64) if ids.dtype.kind in "iufb" else ids
    which = (pd.util.hash_array(hashed) % np.uint64(n)).astype(np.int64)
    order = np.argsort(which, kind="stable")
    which = which[order]
    starts = np.flatnonzero(np.r_[True, which[1:] != which[:-1]])
    ends = [*starts[1:].tolist(), which.size]
    return {int(which[a]): ids[order[a:b]] for a, b in zip(starts.tolist(), ends, strict=True)}


@gc_paused
def duplicate_ids(*chunks: np.ndarray | None) -> tuple[int, Any, int]:
    """One bucket's repeated ids: how many values repeat, the smallest of them and how
    often it appears (``(0, None, 0)`` when none does): a summary of fixed size."""
    got = [c for c in chunks if c is not None and c.size]
    if not got:
        return 0, None, 0
    values, counts = np.unique(np.concatenate(got), return_counts=True)
    dup = np.flatnonzero(counts > 1)
    if not dup.size:
        return 0, None, 0
    first = values[dup[0]]
    return int(dup.size), first.item() if hasattr(first, "item") else first, \
        int(counts[dup[0]])


def check_ids(client: Any, keyed: list[Any], features: int, source: Any,
               id_field: str) -> Any:
    """Futures of the uniqueness check of one side's ids, run on the workers: ids moved
    by hash into buckets of about :data:`IDS_PER_BUCKET`, each bucket's repeats
    summarised (:func:`duplicate_ids`); the client gets one small tuple a bucket."""
    n = max(1, int(np.ceil(features / IDS_PER_BUCKET)))
    splits = client.map(id_buckets, keyed, [n] * len(keyed), pure=False)
    return [client.submit(duplicate_ids,
                          *[client.submit(bucket, s, b, pure=False) for s in splits],
                          pure=False) for b in range(n)]


def ids_error(source: Any, id_field: str, features: int, empty: int,
              found: list[tuple[int, Any, int]]) -> FieldError | None:
    """The in-memory reader's error for empty or repeated ids
    (:func:`geoeval.io.vector.objects_from_frame`), from the buckets' summaries."""
    if empty:
        return FieldError("id_field", id_field, "has empty values", source,
                          detail=f" ({empty} of {features} features)")
    repeats = [f for f in found if f[0]]
    if not repeats:
        return None
    first = min(repeats, key=lambda f: f[1])
    return FieldError("id_field", id_field, "is not unique", source, detail=(
        f": {sum(f[0] for f in repeats)} value(s) repeat "
        f"(e.g. {first[1]!s} appears {first[2]} times)"))
