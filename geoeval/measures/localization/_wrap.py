"""Turn a metric written on a batched pair into a public function on arrays."""

from __future__ import annotations

import functools
import inspect
import re
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np

from geoeval.measures.localization.pairs import BoxPair, ContourPair, MaskPair

_PARAM_DOCS = {
    "box": "reference, result : array_like\n"
    "    Boxes ``(x0, y0, x1, y1)``, shape ``(4,)`` or ``(B, 4)``.",
    "contour": "reference, result : array_like of bool\n"
    "    Contour images (1 = contour pixel), ``(H, W)`` or ``(B, H, W)``; a single\n"
    "    reference broadcasts against a batch of results.\n"
    "n_pixels : int, optional\n"
    "    ``card(I)``, pixels of the common support (default ``H·W``).",
    "mask": "reference, result : array_like of bool\n"
    "    Object masks, ``(H, W)`` or ``(B, H, W)``; a single reference broadcasts\n"
    "    against a batch of results.\n"
    "n_pixels : int, optional\n"
    "    ``card(I)``, pixels of the common support (default ``H·W``).",
}

#: a numpydoc section heading: its title, then a line of dashes
_HEADING = re.compile(r"^(\w[\w ]*)\n-{3,}\n", re.M)


def metric_doc(doc: str, representation: str, returns: str) -> str:
    """The full numpydoc text of a metric from the parts its core docstring writes.

    A core's docstring holds its summary, the parameters of its own (if any, in
    a ``Parameters`` section), Notes (the formula), References and Examples. The
    parts every metric of a representation shares are written here once: the
    ``reference``/``result`` (and ``n_pixels``) parameters, placed first, and
    the Returns section, ``float or numpy.ndarray`` described by ``returns``.
    """
    doc = inspect.cleandoc(doc)
    heads = list(_HEADING.finditer(doc))
    ends = [h.start() for h in heads[1:]] + [len(doc)]
    sections = {h.group(1): doc[h.end():e].strip("\n") for h, e in zip(heads, ends, strict=True)}
    own = sections.pop("Parameters", "")
    parts = [
        doc[: heads[0].start() if heads else len(doc)].rstrip(),
        "Parameters\n----------\n" + _PARAM_DOCS[representation] + ("\n" + own if own else ""),
        "Returns\n-------\nfloat or numpy.ndarray\n"
        + textwrap.fill(returns, 92, initial_indent="    ", subsequent_indent="    "),
    ]
    parts += [f"{title}\n{'-' * len(title)}\n{body}" for title, body in sections.items()]
    return "\n\n".join(parts) + "\n"


_PAIRS = {"box": BoxPair, "contour": ContourPair, "mask": MaskPair}


def pair_metric(
    representation: str, returns: str
) -> Callable[[Callable[..., np.ndarray]], Callable[..., Any]]:
    """Decorator: ``core(pair, **params) -> (B,) array`` becomes ``f(reference, result, ...)``.

    The public function accepts single images ``(H, W)`` (boxes ``(4,)``) and
    returns a float, or batches ``(B, H, W)`` (a single reference broadcasts) and
    returns a ``(B,)`` array. The core stays reachable as ``f.core`` (the audit
    calls it on shared pairs) and the representation as ``f.representation``.
    ``returns`` describes the values (range, sense, NaN cases); the docstring is
    completed by :func:`metric_doc`.
    """
    pair_cls = _PAIRS[representation]
    single_ndim = 1 if representation == "box" else 2

    def deco(core: Callable[..., np.ndarray]) -> Callable[..., Any]:
        core.__doc__ = metric_doc(core.__doc__ or "", representation, returns)

        @functools.wraps(core)
        def public(reference: Any, result: Any, *, n_pixels: int | None = None, **params: Any):
            if representation == "box":
                pair = pair_cls(reference, result)
            else:
                pair = pair_cls(reference, result, n_pixels)
            out = np.asarray(core(pair, **params), dtype=float)
            if np.ndim(reference) == single_ndim and np.ndim(result) == single_ndim:
                return float(out[0])
            return out

        extra = [
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
            for p in list(inspect.signature(core).parameters.values())[1:]
        ]
        head = [
            inspect.Parameter("reference", inspect.Parameter.POSITIONAL_OR_KEYWORD),
            inspect.Parameter("result", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        ]
        if representation != "box":
            head.append(inspect.Parameter("n_pixels", inspect.Parameter.KEYWORD_ONLY, default=None))
        public.__signature__ = inspect.Signature(head + extra)  # type: ignore[attr-defined]
        del public.__wrapped__
        public.core = core  # type: ignore[attr-defined]
        public.representation = representation  # type: ignore[attr-defined]
        return public

    return deco


def safe_div(num: np.ndarray, den: np.ndarray, empty: float = np.nan) -> np.ndarray:
    """``num / den`` with ``empty`` where ``den == 0``."""
    num, den = np.broadcast_arrays(np.asarray(num, float), np.asarray(den, float))
    out = np.full(num.shape, empty, dtype=float)
    ok = den != 0
    out[ok] = num[ok] / den[ok]
    return out
