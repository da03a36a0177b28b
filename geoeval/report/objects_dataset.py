"""The objects dataset (``--objects DIR``): every object's result, as partitioned GeoParquet.

One row per object of both sides: ``side`` (``reference`` / ``submission``),
``position`` (its position in its layer, the index of the in-memory engine),
``id``, ``area``, per matcher ``<matcher>_status`` (``matched``, ``missed``,
``false_alarm``), ``<matcher>_instance`` (the smallest reference position of
its instance, -1 for none), ``<matcher>_kind``, ``<matcher>_overlap``,
``<matcher>_score`` (only for the matchers that score their instances, Hoover
and IoU, as in the GeoPackage), ``<matcher>_mallows`` (the instance's Mallows
score, when computed) (:mod:`geoeval.engine.objects`), the input layers' own
attributes (``ref_<name>`` on reference rows, ``sub_<name>`` on submission rows,
null on the other side's; :mod:`geoeval.io.attributes`), and the geometry (WKB).

The folder holds ``part-NNNNN.parquet`` files, one per partition with the
Dask engine (written by the workers; the last one holds the objects of the
components that cross partitions) or per :data:`PART_ROWS` rows with the
local engine, each a GeoParquet 1.0 file (``geo`` metadata: WKB, CRS as
PROJJSON), rows sorted by (side, position) within a part, plus ``_metadata``
(the row groups of every part) and ``_common_metadata`` (the schema) as Dask,
Spark and pyarrow write them. geopandas (``geopandas.read_parquet(DIR)``),
DuckDB (``read_parquet('DIR/*.parquet')``), GDAL's Parquet driver and QGIS
(each part, or the folder with GDAL ≥ 3.8) open it directly.

The parts are written into a hidden staging folder beside ``DIR``, renamed
with the run's other outputs once every part is there and the run has succeeded
(:func:`geoeval.outputs.move_folder`): a failed or interrupted run leaves no
dataset and no staging folder.

``DIR`` may be a URL of object storage (``s3://bucket/objects``; an empty prefix,
checked before the work): the parts are then written straight into a hidden
staging prefix beside it (:func:`geoeval.outputs.store_staging`), each in one
upload by the process that made it (the Dask workers, with their own credentials
from their environment, or this process with the local engine); nothing passes
through the client. When the run has succeeded the store copies them into place,
``_common_metadata`` and ``_metadata`` last; a failed run deletes the staging
prefix and whatever was copied.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from geoeval import cancel
from geoeval.errors import OutputError
from geoeval.output_targets import store_location, temp_prefix
from geoeval.outputs import (
    abandon_staging,
    check_new_folder,
    move_folder,
    store_staging,
)

#: Rows (objects) per part written by the local engine.
PART_ROWS = 1_000_000
_SUFFIXES = ("status", "instance", "kind", "overlap", "score", "mallows")
#: Arrow type (its alias) of each per-matcher column.
_TYPES = {"status": "string", "instance": "int64", "kind": "string", "overlap": "float64",
          "score": "float64", "mallows": "float64"}


def suffixes(matcher: str, unscored: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The column suffixes of ``matcher``: no ``score`` when it is in ``unscored``."""
    return tuple(s for s in _SUFFIXES if s != "score" or matcher not in unscored)


def unscored_matchers(matchers: tuple[str, ...]) -> tuple[str, ...]:
    """The matchers whose instances carry no score of their own (BGM scores the scene,
    Özdemir et al. 2010, eq. 1; MOM's instances have their Mallows score)."""
    from geoeval.matching import registry

    return tuple(m for m in matchers if not registry.get(m).scores_instances)


def check_target(folder: str | os.PathLike[str]) -> Path | str:
    """The dataset folder, checked before the work: missing or empty, its parent
    writable (a URL: an empty prefix of a writable bucket)."""
    if store_location(folder) is not None:
        check_new_folder(folder, "--objects")
        return folder  # type: ignore[return-value]
    target = Path(folder)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise OutputError("exists and is not an empty folder; give a new folder for the "
                          "objects dataset (--objects)", target)
    parent = target.absolute().parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise OutputError("its parent folder is missing or not writable (--objects)", target)
    return target


def schema(matchers: tuple[str, ...], id_kind: str, crs: Any,
           unscored: tuple[str, ...] = (), attributes: Any = None) -> Any:
    """The Arrow schema of every part (GeoParquet ``geo`` metadata included); the
    matchers in ``unscored`` have no ``<matcher>_score`` column; ``attributes`` (an
    Arrow schema, or ``None``) are the inputs' own columns, before the geometry."""
    import pyarrow as pa

    fields = [pa.field("side", pa.string()), pa.field("position", pa.int64()),
              pa.field("id", pa.int64() if id_kind in "iub" else pa.string()),
              pa.field("area", pa.float64())]
    for m in matchers:
        fields += [pa.field(f"{m}_{s}", pa.type_for_alias(_TYPES[s]))
                   for s in suffixes(m, unscored)]
    fields += list(attributes or ())
    fields.append(pa.field("geometry", pa.binary()))
    column: dict[str, Any] = {"encoding": "WKB", "geometry_types": ["Polygon", "MultiPolygon"]}
    column["crs"] = None if crs is None else json.loads(_projjson(crs))
    geo = {"version": "1.0.0", "primary_column": "geometry", "columns": {"geometry": column}}
    return pa.schema(fields, metadata={b"geo": json.dumps(geo).encode()})


def _projjson(crs: Any) -> str:
    from pyproj import CRS

    return CRS.from_user_input(crs).to_json()


@dataclass(frozen=True)
class ObjectsWriter:
    """Writes parts of one objects dataset into ``staging`` (picklable: the Dask
    workers call :meth:`write`; they must see the same folder, or the same store:
    ``staging`` is then a URL, a prefix of :func:`geoeval.outputs.store_staging`)."""

    staging: str
    matchers: tuple[str, ...]
    id_kind: str
    crs_json: str | None
    target: str = ""
    unscored: tuple[str, ...] = ()
    attributes: bytes | None = None

    def attribute_schema(self) -> Any:
        """The Arrow schema of the inputs' attribute columns (``None``: none)."""
        if self.attributes is None:
            return None
        import pyarrow as pa

        return pa.ipc.read_schema(pa.py_buffer(self.attributes))

    def schema(self) -> Any:
        return schema(self.matchers, self.id_kind, self.crs_json, self.unscored,
                      self.attribute_schema())

    def finish(self, footers: list[Any]) -> str:
        """Write the dataset's metadata files and move it into place; its folder."""
        return str(finish(self, self.target, footers))

    def abandon(self) -> None:
        abandon(self)

    def write(self, part: int, sides: list[tuple[Any, ...]]) -> Any:
        """Write part ``part`` from ``[(positions, ids, areas, geometries, columns,
        attributes)]`` of the reference then the submission (``attributes``: the rows'
        attribute table, :func:`geoeval.io.attributes.attribute_table`, or ``None``);
        returns its Parquet footer (for ``_metadata``)."""
        import pyarrow as pa
        import pyarrow.parquet as pq
        import shapely

        from geoeval.io.attributes import conform

        sch = self.schema()
        extra = self.attribute_schema()
        own = [f for f in sch if extra is None or f.name not in extra.names]
        data: dict[str, list[Any]] = {f.name: [] for f in own}
        added: list[list[Any]] = []
        for side, (pos, ids, areas, geoms, cols, *attrs) in zip(("reference", "submission"),
                                                                 sides, strict=True):
            n = len(pos)
            if extra is not None:
                added.append(conform(attrs[0] if attrs else None, extra, n))
            data["side"].append(np.full(n, side, dtype=object))
            data["position"].append(np.asarray(pos, np.int64))
            ids = np.asarray(ids)
            data["id"].append(ids.astype(np.int64) if self.id_kind in "iub"
                              else ids.astype(str).astype(object))
            data["area"].append(np.asarray(areas, float))
            for m in self.matchers:
                for s in suffixes(m, self.unscored):
                    data[f"{m}_{s}"].append(cols[m][s])
            geoms = np.asarray(geoms, dtype=object)
            wkb = n and isinstance(geoms[0], bytes)  # the Dask engine keeps WKB
            data["geometry"].append(geoms if wkb else shapely.to_wkb(geoms) if n
                                    else np.zeros(0, dtype=object))
        arrays = {f.name: pa.array(np.concatenate(data[f.name]) if data[f.name] else [],
                                   type=f.type, from_pandas=True) for f in own}
        if extra is not None:
            arrays.update({f.name: pa.concat_arrays([a[k] for a in added])
                           for k, f in enumerate(extra)})
        arrays = [arrays[f.name] for f in sch]
        table = pa.Table.from_arrays(arrays, schema=sch)
        name = f"part-{part:05d}.parquet"
        store = store_location(self.staging)
        if store is not None:  # one upload of the whole part: the object appears whole
            from geoeval.store_outputs import put

            sink = pa.BufferOutputStream()
            pq.write_table(table, sink, row_group_size=100_000)
            data = sink.getvalue()
            put(data, store.child(name))
            meta = pq.ParquetFile(pa.BufferReader(data)).metadata
        else:
            path = Path(self.staging) / name
            tmp = path.with_name(f".{name}.tmp")
            pq.write_table(table, tmp, row_group_size=100_000)
            os.replace(tmp, path)
            meta = pq.ParquetFile(path).metadata
        meta.set_file_path(name)
        return meta


def open_dataset(folder: str | os.PathLike[str], matchers: tuple[str, ...], id_kind: str,
                 crs: Any, attributes: Any = None) -> ObjectsWriter:
    """A writer whose parts go into a staging folder beside ``folder`` (a staging
    prefix beside a folder's URL); ``attributes`` the Arrow schema of the inputs'
    attribute columns (``None``: none)."""
    if store_location(folder) is not None:
        where = store_staging(os.fspath(folder)).url
    else:
        target = Path(folder).absolute()
        tag = "geoeval-partial"
        staging = target.with_name(temp_prefix(target, len(tag)) + tag)
        if staging.exists():
            shutil.rmtree(staging)
        with cancel.deferred():  # made and registered, or neither
            staging.mkdir(parents=True)
            cancel.track(staging, "tree")
        where = str(staging)
    return ObjectsWriter(where, tuple(matchers), id_kind,
                         None if crs is None else _projjson(crs), str(folder),
                         unscored_matchers(tuple(matchers)),
                         None if attributes is None else attributes.serialize().to_pybytes())


def finish(writer: ObjectsWriter, folder: str | os.PathLike[str],
           footers: list[Any]) -> Path | str:
    """Write ``_common_metadata`` and ``_metadata`` and move the parts into ``folder``."""
    import pyarrow.parquet as pq

    sch = writer.schema()
    store = store_location(writer.staging)
    if store is not None:
        from geoeval.store_outputs import filesystem, reason

        for name, collected in (("_common_metadata", None),
                                ("_metadata", [f for f in footers if f is not None])):
            fs, path = filesystem(store.child(name))
            try:
                pq.write_metadata(sch, path, metadata_collector=collected, filesystem=fs)
            except OSError as exc:
                raise OutputError(f"could not write ({reason(exc)})",
                                  store.child(name).display) from None
        return move_folder(store, folder)
    staging = Path(writer.staging)
    pq.write_metadata(sch, staging / "_common_metadata")
    pq.write_metadata(sch, staging / "_metadata",
                      metadata_collector=[f for f in footers if f is not None])
    return move_folder(staging, folder)


def abandon(writer: ObjectsWriter) -> None:
    """Remove the staging folder (prefix) of a run that failed."""
    if store_location(writer.staging) is not None:
        abandon_staging(writer.staging)
        return
    shutil.rmtree(writer.staging, ignore_errors=True)
    cancel.untrack(writer.staging)


def write_objects_dataset(result: Any, folder: str | os.PathLike[str]) -> Path | str:
    """The local engine's objects dataset of a :class:`~geoeval.scoring.ScoreResult`:
    the same rows as the Dask engine's, in parts of :data:`PART_ROWS` objects."""
    from geoeval.engine.objects import matching_columns

    ref, sub = result.reference, result.submission
    names = tuple(result.results)
    ids = np.concatenate([np.asarray(ref.ids), np.asarray(sub.ids)]) if len(ref) or len(sub) \
        else np.zeros(0, np.int64)
    kind = ids.dtype.kind if ids.dtype.kind in "iub" else "U"
    from geoeval.io.attributes import PREFIXES, attribute_table, unified_schema

    tables = (attribute_table(ref.attributes, PREFIXES["reference"]),
              attribute_table(sub.attributes, PREFIXES["submission"]))
    writer = open_dataset(folder, names, kind, ref.crs,
                          unified_schema([None if t is None else t.schema for t in tables]))
    try:
        rpos, spos = np.arange(len(ref)), np.arange(len(sub))
        cols = {n: matching_columns(r.matching, rpos, spos, r.instance_mallows)
                for n, r in result.results.items()}
        footers = []
        n_parts = max(1, int(np.ceil((len(ref) + len(sub)) / PART_ROWS)))
        rcut = np.linspace(0, len(ref), n_parts + 1).astype(int)
        scut = np.linspace(0, len(sub), n_parts + 1).astype(int)
        for p in range(n_parts):
            sides = []
            for s, (objs, cut) in enumerate(((ref, rcut), (sub, scut))):
                k = slice(cut[p], cut[p + 1])
                sides.append((np.arange(len(objs))[k], objs.ids[k], objs.areas[k],
                              objs.polygons[k],
                              {n: {c: v[k] for c, v in cols[n][s].items()} for n in names},
                              None if tables[s] is None
                              else tables[s].slice(cut[p], cut[p + 1] - cut[p])))
            footers.append(writer.write(p, sides))
        return finish(writer, folder, footers)
    except BaseException:
        abandon(writer)
        raise
