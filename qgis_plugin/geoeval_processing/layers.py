"""Project layers as files geoeval can read.

A layer whose data already is a file geoeval reads (an OGR file layer without
a filter, a GDAL raster file) is passed as it is; anything else — a memory
layer, a database or web layer, a filtered layer, *selected features only* —
is first written to a temporary GeoPackage (vectors) or GeoTIFF (rasters) in
the run's own folder, in the layer's CRS.

A user's folders are not ours to write in: a raster layer that QGIS opens for
an algorithm (a file path given to ``qgis_process``, or typed in the dialog)
computes statistics for its renderer, and GDAL would keep them in an
``.aux.xml`` file beside the raster when the layer is closed. Layers are
therefore loaded inside :func:`no_sidecar_files`, and a raster that Processing
loaded before the algorithm's code runs is reopened that way
(:func:`reopen_without_statistics`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass

from qgis.core import (
    QgsMapLayer,
    QgsProcessingException,
    QgsProviderRegistry,
    QgsRasterFileWriter,
    QgsRasterLayer,
    QgsRasterPipe,
    QgsVectorFileWriter,
    QgsVectorLayer,
)


@dataclass(frozen=True)
class Input:
    """A file for geoeval: ``path`` and, for a multi-layer vector file, ``layer``."""

    path: str
    layer: str | None
    exported: bool


@contextlib.contextmanager
def no_sidecar_files() -> Iterator[None]:
    """GDAL's persistent auxiliary metadata (PAM: the ``.aux.xml`` files) off for the
    datasets this thread opens meanwhile, the thread's own setting restored after.

    GDAL decides when it opens a dataset whether it will write the file when the
    dataset is closed, so the layers loaded here never write one, whenever they
    are closed. Only this thread's datasets are concerned (``CPLSetThreadLocalConfigOption``):
    the layers of the user's project, rendered on other threads, keep their
    statistics files as QGIS normally writes them.
    """
    try:
        from osgeo import gdal
    except ImportError:  # pragma: no cover - QGIS ships GDAL's Python bindings
        yield
        return
    before = gdal.GetThreadLocalConfigOption("GDAL_PAM_ENABLED", None)
    gdal.SetThreadLocalConfigOption("GDAL_PAM_ENABLED", "NO")
    try:
        yield
    finally:
        gdal.SetThreadLocalConfigOption("GDAL_PAM_ENABLED", before)


def reopen_without_statistics(value: str, context) -> None:
    """Close the raster layers Processing loaded from the file path ``value`` into the
    context's temporary store, and undo what their closing wrote beside the file: a
    new ``.aux.xml`` is removed, the user's own is put back as it was. The algorithm
    loads the path again inside :func:`no_sidecar_files`.

    Processing loads a layer given as a file path (``qgis_process run … REFERENCE=
    x.tif``) to check the parameters, before the algorithm's own code runs, and QGIS
    computes statistics for its renderer: GDAL decided at opening to keep them in a
    file beside the raster at closing. The project's own layers are not touched.
    """
    if not value or not os.path.isfile(value.split("|")[0]):
        return
    store = context.temporaryLayerStore()
    wanted = os.path.realpath(value)
    for layer in list(store.mapLayers().values()):
        if not (isinstance(layer, QgsRasterLayer) and layer.providerType() == "gdal"):
            continue
        source = layer.source()
        if not os.path.isfile(source) or os.path.realpath(source) != wanted:
            continue
        aux = source + ".aux.xml"
        before = _snapshot(aux)
        store.removeMapLayer(layer)  # deletes the layer: GDAL closes the file
        try:
            if before is None and os.path.isfile(aux):
                os.remove(aux)
            elif before is not None and _snapshot(aux) != before:
                with open(aux, "wb") as fh:  # the user's own statistics file, as it was
                    fh.write(before[0])
                os.utime(aux, ns=(before[1], before[1]))
        except OSError:  # not ours to fail on: the run goes on
            pass


def _snapshot(path: str) -> tuple[bytes, int] | None:
    """A file's bytes and modification time (ns), ``None`` when there is no file."""
    try:
        with open(path, "rb") as fh:
            return fh.read(), os.stat(path).st_mtime_ns
    except OSError:
        return None


def safe_name(name: str) -> str:
    """A file name from a layer name (letters, digits, ``_-.`` kept)."""
    return re.sub(r"[^\w.-]+", "_", name).strip("._") or "layer"


def as_input(layer: QgsMapLayer, what: str, folder: str, context, *,
             selected_only: bool = False, always_export: bool = False,
             name: str | None = None) -> Input:
    """``layer`` as a file in ``folder`` (exported when needed; see the module).

    ``what`` names the parameter in messages; ``name`` (default the layer's
    name) is the exported file's stem, which ``geoeval rank`` shows.
    """
    stem = safe_name(name or layer.name())
    if isinstance(layer, QgsRasterLayer):
        return _raster(layer, what, folder, stem, always_export)
    if not isinstance(layer, QgsVectorLayer):
        raise QgsProcessingException(f"{what}: {layer.name()} is neither a vector nor a "
                                     "raster layer")
    if selected_only and layer.selectedFeatureCount() == 0:
        raise QgsProcessingException(f"{what}: 'selected features only' is ticked but no "
                                     f"feature of {layer.name()} is selected")
    if not (selected_only or always_export):
        direct = _ogr_file(layer)
        if direct is not None:
            return direct
    path = os.path.join(folder, stem + ".gpkg")
    options = QgsVectorFileWriter.SaveVectorOptions()
    options.driverName = "GPKG"
    options.layerName = stem
    options.onlySelectedFeatures = bool(selected_only)
    options.fileEncoding = "UTF-8"
    error, message, _, _ = QgsVectorFileWriter.writeAsVectorFormatV3(
        layer, path, context.transformContext(), options)
    if error != QgsVectorFileWriter.NoError:
        raise QgsProcessingException(f"{what}: cannot export {layer.name()} to a temporary "
                                     f"GeoPackage: {message}")
    return Input(path, None, True)


def _ogr_file(layer: QgsVectorLayer) -> Input | None:
    """An OGR layer that geoeval can read from its file as it is, else None."""
    if layer.providerType() != "ogr" or layer.subsetString():
        return None
    parts = QgsProviderRegistry.instance().decodeUri("ogr", layer.source())
    path = parts.get("path") or ""
    if not os.path.exists(path) or parts.get("subset"):
        return None
    if parts.get("layerId") not in (None, ""):
        return None  # a layer given by index: export rather than guess its name
    if path.lower().endswith(".shp"):
        prj = os.path.splitext(path)[0] + ".prj"
        if not os.path.exists(prj) and layer.crs().isValid():
            return None  # QGIS knows the CRS, the file does not: export it with the CRS
    return Input(path, parts.get("layerName") or None, False)


def _raster(layer: QgsRasterLayer, what: str, folder: str, stem: str,
            always_export: bool) -> Input:
    source = layer.source()
    if layer.providerType() == "gdal" and os.path.isfile(source):
        if not always_export:
            return Input(source, None, False)
        # a file named after the layer (geoeval rank names submissions by file), no copy
        # of the pixels where the system allows a link
        # the link's target as an absolute path: a relative one (a file named
        # relatively on qgis_process's command line) would be read from the link's folder
        source = os.path.abspath(source)
        suffix = os.path.splitext(source)[1]
        path = os.path.join(folder, stem + suffix)
        try:
            os.symlink(source, path)
        except (OSError, NotImplementedError):
            shutil.copyfile(source, path)
        return Input(path, None, True)
    provider = layer.dataProvider()
    path = os.path.join(folder, stem + ".tif")
    writer = QgsRasterFileWriter(path)
    writer.setOutputFormat("GTiff")
    pipe = QgsRasterPipe()
    if not pipe.set(provider.clone()):
        raise QgsProcessingException(f"{what}: cannot read the raster {layer.name()}")
    error = writer.writeRaster(pipe, provider.xSize(), provider.ySize(), provider.extent(),
                               provider.crs())
    if error != QgsRasterFileWriter.NoError:
        raise QgsProcessingException(f"{what}: cannot export {layer.name()} to a temporary "
                                     f"GeoTIFF (error {int(error)})")
    return Input(path, None, True)
