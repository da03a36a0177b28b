"""Matchers: BGM, Hoover, multi-object maximum overlap (MOM) and IoU one-to-one.

Every matcher takes an :class:`~geoeval.overlap.Overlap` and returns a
:class:`~geoeval.matching.result.Matching`; none reads files.
"""

from __future__ import annotations

from typing import Any

from geoeval.errors import InputError
from geoeval.matching.result import Instance, Matching
from geoeval.overlap import Overlap

MATCHERS: tuple[str, ...] = ("bgm", "hoover", "mom", "iou")

__all__ = ["MATCHERS", "Instance", "Matching", "match"]


def match(overlap: Overlap, matcher: str, **params: Any) -> Matching:
    """Run one matcher by name.

    Parameters
    ----------
    overlap : Overlap
    matcher : {'bgm', 'hoover', 'mom', 'iou'}
    **params
        ``threshold`` for hoover and iou; ``min_overlap`` (and ``method``) for mom.
    """
    if matcher == "bgm":
        from geoeval.matching.bgm import match_bgm

        return match_bgm(overlap, **params)
    if matcher == "hoover":
        from geoeval.matching.hoover import match_hoover

        return match_hoover(overlap, **params)
    if matcher == "mom":
        from geoeval.matching.mom import match_mom

        return match_mom(overlap, **params)
    if matcher == "iou":
        from geoeval.matching.iou import match_iou

        return match_iou(overlap, **params)
    raise InputError(f"unknown matcher {matcher!r} (choose from {', '.join(MATCHERS)})")
