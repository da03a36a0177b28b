"""The input layers' own attributes as columns of the per-object outputs.

A vector layer's attribute columns (the detector's confidence, class, ids …;
:attr:`geoeval.objects.ObjectSet.attributes`) are carried into the per-object
tables (GeoPackage, CSV, GeoParquet) and the objects dataset, each prefixed by
its side: ``ref_<name>`` for the reference, ``sub_<name>`` for the submission,
whatever the name (an input column named ``status`` becomes ``ref_status`` and
does not replace geoeval's own). Columns are converted whole, never object by
object, into types every output can hold:

* booleans, integers and floats stay numbers (integers with nulls become nullable
  64-bit integers; unsigned integers above ``2**63 - 1`` become their decimal text);
* text stays text; dates and times stay as the reader gives them (text from a GDAL
  layer, timestamps from GeoParquet or a GeoDataFrame);
* anything else (lists, mappings, bytes, durations, complex numbers …) becomes text:
  lists and mappings as JSON, bytes as hexadecimal, the rest as Python prints it.

A prefixed name that equals, ignoring case (GeoPackage and QGIS compare names so),
one already in the table gets ``_2``, ``_3`` … appended.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

#: Prefix of each side's attribute columns.
PREFIXES = {"reference": "ref", "submission": "sub"}


def attribute_columns(attributes: Any, prefix: str,
                      taken: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """The columns of ``attributes`` (a DataFrame, one row per object, or ``None``),
    named ``<prefix>_<name>`` and converted to writable types.

    Parameters
    ----------
    attributes : pandas.DataFrame or None
        :attr:`geoeval.objects.ObjectSet.attributes`.
    prefix : str
        ``ref`` or ``sub`` (:data:`PREFIXES`).
    taken : sequence of str
        Names already in the table (compared ignoring case).

    Returns
    -------
    dict of str to array
        Numpy arrays (masked for integers with nulls, ``None`` in text for null)
        or pandas arrays (dates and times); empty without attributes.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"status": ["a", None], "n": pd.array([1, None], "Int64")})
    >>> cols = attribute_columns(frame, "sub", ["id", "status"])
    >>> list(cols), cols["sub_status"].tolist(), cols["sub_n"].tolist()
    (['sub_status', 'sub_n'], ['a', None], [1, None])
    """
    out: dict[str, Any] = {}
    if attributes is None:
        return out
    used = {name.lower() for name in taken}
    for name in attributes.columns:
        column = f"{prefix}_{name}"
        k = 2
        while column.lower() in used:
            column = f"{prefix}_{name}_{k}"
            k += 1
        used.add(column.lower())
        out[column] = writable(attributes[name])
    return out


def writable(series: Any) -> Any:
    """One attribute column in a type the GeoPackage, CSV and GeoParquet writers hold
    (the rules of this module's docstring)."""
    import pandas as pd

    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return writable(pd.Series(np.asarray(series)).infer_objects())  # its values
    if pd.api.types.is_bool_dtype(dtype) and not isinstance(dtype, pd.BooleanDtype):
        return series.to_numpy(bool)
    if pd.api.types.is_integer_dtype(dtype) or isinstance(dtype, pd.BooleanDtype):
        return _integers(series)
    if pd.api.types.is_float_dtype(dtype):
        return series.to_numpy(float, na_value=np.nan)
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return series.array
    if pd.api.types.is_string_dtype(dtype) and not _has_non_text(series):
        values = np.array(series.to_numpy(object), dtype=object)  # a copy, writable
        values[pd.isna(values)] = None
        return values
    return _as_text(series)


def _integers(series: Any) -> np.ndarray:
    """Integers as int64 (masked where null); above the int64 range as text."""
    import pandas as pd

    null = series.isna().to_numpy()
    valid = series[~null]
    if valid.size and pd.api.types.is_unsigned_integer_dtype(series.dtype) \
            and int(valid.max()) > np.iinfo(np.int64).max:
        return _as_text(series)
    values = series.to_numpy(np.int64, na_value=0) if null.any() \
        else series.to_numpy(np.int64)
    return np.ma.MaskedArray(values, mask=null) if null.any() else values


def _has_non_text(series: Any) -> bool:
    """Whether an object column holds anything but text and nulls."""
    import pandas as pd

    if series.dtype != object:
        return False
    values = series.to_numpy(object)
    values = values[~pd.isna(values)] if values.size else values
    return bool(values.size) and not pd.api.types.infer_dtype(values, skipna=True) == "string"


def _as_text(series: Any) -> np.ndarray:
    """Every value as text (null stays null): JSON for lists and mappings, hexadecimal
    for bytes, else ``str``."""
    import pandas as pd

    def text(v: Any) -> Any:
        if v is None or (not isinstance(v, list | tuple | dict | np.ndarray | bytes)
                         and pd.isna(v)):
            return None
        if isinstance(v, bytes | bytearray | memoryview):
            return bytes(v).hex()
        if isinstance(v, np.ndarray):
            v = v.tolist()
        if isinstance(v, list | tuple | dict):
            return json.dumps(v, default=str, ensure_ascii=False)
        return str(v)

    return np.asarray(series.map(text, na_action=None).to_numpy(object), dtype=object)


def attribute_table(attributes: Any, prefix: str) -> Any:
    """The columns of :func:`attribute_columns` as a ``pyarrow.Table`` (nulls as nulls,
    NaN too), or ``None`` without attributes: what the objects dataset writes."""
    import pyarrow as pa

    columns = attribute_columns(attributes, prefix)
    if not columns:
        return None
    arrays = []
    for values in columns.values():
        if isinstance(values, np.ma.MaskedArray):
            arrays.append(pa.array(np.asarray(values.data), mask=np.ma.getmaskarray(values)))
        else:
            arrays.append(pa.array(values, from_pandas=True))
    return pa.Table.from_arrays(arrays, names=list(columns))


def unified_schema(schemas: list[Any]) -> Any:
    """One Arrow schema for tables of the same attributes read apart (pieces of a layer,
    both sides): every field of any, types promoted (a column all null in one piece takes
    the others' type; integers and floats give floats). ``None`` without fields."""
    import pyarrow as pa

    schemas = [s for s in schemas if s is not None and len(s)]
    if not schemas:
        return None
    return pa.unify_schemas(schemas, promote_options="permissive")


def conform(table: Any, schema: Any, n: int) -> list[Any]:
    """The arrays of ``schema``'s fields from ``table`` (``n`` rows, or ``None``): the
    table's columns cast to the field types, nulls for the fields it lacks."""
    import pyarrow as pa

    out = []
    for f in schema:
        if table is not None and f.name in table.column_names:
            out.append(table.column(f.name).combine_chunks().cast(f.type))
        else:
            out.append(pa.nulls(n, f.type))
    return out
