"""Checks of single JSON values the COCO readers share (messages name the record)."""

from __future__ import annotations

from typing import Any

from geoeval.errors import InputError


def _req(entry: Any, key: str, where: str) -> Any:
    if not isinstance(entry, dict):
        raise InputError("expected a JSON object", where)
    if key not in entry:
        raise InputError(f"missing {key!r}", where)
    return entry[key]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _int_id(value: Any, what: str, where: str) -> int:
    """An id the official evaluator can use: a JSON integer (not a string, bool or float)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InputError(f"{what} must be an integer, got {_short(value)}", where)
    return value
