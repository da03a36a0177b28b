"""Matchers: BGM, Hoover, multi-object maximum overlap (MOM) and IoU one-to-one.

Every matcher takes an :class:`~geoeval.overlap.Overlap` and returns a
:class:`~geoeval.matching.result.Matching`; none reads files. The matchers, their
parameters and how their accuracy is computed are one table,
:mod:`geoeval.matching.registry`.
"""

from __future__ import annotations

from typing import Any

from geoeval.matching import registry
from geoeval.matching.result import Instance, Matching
from geoeval.overlap import Overlap

#: The built-in matchers, in report order (:func:`geoeval.matching.registry.names`
#: adds any registered since).
MATCHERS: tuple[str, ...] = registry.BUILTIN

__all__ = ["MATCHERS", "Instance", "Matching", "match", "registry"]


def match(overlap: Overlap, matcher: str, **params: Any) -> Matching:
    """Run one registered matcher by name.

    Parameters
    ----------
    overlap : Overlap
    matcher : str
        A name of :func:`geoeval.matching.registry.names` (``bgm``, ``hoover``,
        ``mom``, ``iou``).
    **params
        The matcher function's keywords: ``threshold`` for hoover and iou;
        ``min_overlap`` (and ``method``) for mom.

    Raises
    ------
    InputError
        Unknown matcher (the message lists the registered ones).
    """
    return registry.get(matcher).run(overlap, **params)
