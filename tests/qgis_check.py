"""Open a geoeval GeoPackage in real QGIS and report what QGIS sees (run by test_qgis.py).

Runs under Debian's own interpreter (``/usr/bin/python3``, where ``python3-qgis``
installs), not geoeval's virtual environment: only the standard library, QGIS
and GDAL are imported. Usage::

    QT_QPA_PLATFORM=offscreen /usr/bin/python3 tests/qgis_check.py GPKG OUT_DIR

Writes ``OUT_DIR/findings.json`` (layers valid, renderer type and attribute,
categories with colours, feature counts, GDAL/QGIS warnings), renders the map
to ``OUT_DIR/map.png`` (reference and submission with their stored styles)
and a layout with legend and scale bar to ``OUT_DIR/layout.png``. The findings
are written before QGIS shuts down and the script ends with ``os._exit(0)``:
QGIS may crash on interpreter exit after ``exitQgis()``.
"""

from __future__ import annotations

import json
import os
import sys
import traceback


def main(gpkg: str, out_dir: str) -> dict:
    from osgeo import gdal
    from qgis.core import (
        Qgis,
        QgsApplication,
        QgsLayoutExporter,
        QgsLayoutItemLegend,
        QgsLayoutItemMap,
        QgsLayoutItemScaleBar,
        QgsLayoutPoint,
        QgsLayoutSize,
        QgsMapRendererSequentialJob,
        QgsMapSettings,
        QgsPrintLayout,
        QgsProject,
        QgsRectangle,
        QgsUnitTypes,
        QgsVectorLayer,
    )
    from qgis.PyQt.QtCore import QSize
    from qgis.PyQt.QtGui import QColor

    findings: dict = {"qgis": Qgis.QGIS_VERSION, "gdal": gdal.__version__, "layers": {},
                      "messages": [], "gdal_warnings": []}

    # GDAL's own view of the file: any warning (e.g. "partially supported version")?
    def handler(level: int, code: int, msg: str) -> None:
        findings["gdal_warnings"].append(f"{level}:{code}:{msg}")

    gdal.PushErrorHandler(handler)
    ds = gdal.OpenEx(gpkg, gdal.OF_VECTOR)
    findings["gdal_layers"] = [ds.GetLayer(i).GetName() for i in range(ds.GetLayerCount())]
    ds = None
    gdal.PopErrorHandler()

    QgsApplication.setPrefixPath("/usr", True)
    app = QgsApplication([], False)
    app.initQgis()

    def on_message(message: str, tag: str, level: int) -> None:
        findings["messages"].append(f"[{tag}] {message}")

    QgsApplication.messageLog().messageReceived.connect(on_message)

    layers = {}
    for name in ("reference", "submission", "instances", "summary"):
        layer = QgsVectorLayer(f"{gpkg}|layername={name}", name, "ogr")
        info: dict = {"valid": layer.isValid(), "features": layer.featureCount(),
                      "fields": [f.name() for f in layer.fields()],
                      "spatial": layer.isSpatial()}
        if layer.isValid() and layer.isSpatial():
            renderer = layer.renderer()
            info["renderer"] = renderer.type()
            info["crs"] = layer.crs().authid()
            if renderer.type() == "categorizedSymbol":
                info["attribute"] = renderer.classAttribute()
                info["categories"] = [
                    {"value": c.value(), "label": c.label(),
                     "colour": c.symbol().color().name(),
                     "outline": c.symbol().symbolLayer(0).strokeColor().name()}
                    for c in renderer.categories()]
            styles = layer.listStylesInDatabase()
            info["styles_in_database"] = list(styles[2]) if styles and len(styles) > 2 else []
        layers[name] = layer
        findings["layers"][name] = info

    ref, sub = layers["reference"], layers["submission"]
    if ref.isValid() and sub.isValid():
        project = QgsProject.instance()
        project.setCrs(ref.crs())
        for layer in (layers["instances"], ref, sub):
            project.addMapLayer(layer)
        full = ref.extent()
        # a close-up of the scene centre, where buildings are visible one by one
        cx, cy = full.center().x(), full.center().y()
        half = min(full.width(), full.height()) / 8.0
        zoom = QgsRectangle(cx - half, cy - half, cx + half, cy + half)

        settings = QgsMapSettings()
        settings.setLayers([sub, ref])  # first is drawn on top
        settings.setDestinationCrs(ref.crs())
        settings.setBackgroundColor(QColor(255, 255, 255))
        settings.setOutputSize(QSize(800, 800))
        settings.setExtent(zoom)
        job = QgsMapRendererSequentialJob(settings)
        job.start()
        job.waitForFinished()
        image = job.renderedImage()
        png = os.path.join(out_dir, "map.png")
        findings["map_saved"] = bool(image.save(png, "PNG"))
        findings["map_size"] = [image.width(), image.height()]
        findings["render_errors"] = [e.message for e in job.errors()]

        layout = QgsPrintLayout(project)
        layout.initializeDefaults()
        page = layout.pageCollection().page(0)
        page.setPageSize(QgsLayoutSize(235, 170, QgsUnitTypes.LayoutMillimeters))
        lmap = QgsLayoutItemMap(layout)
        lmap.attemptMove(QgsLayoutPoint(5, 5, QgsUnitTypes.LayoutMillimeters))
        lmap.attemptResize(QgsLayoutSize(160, 160, QgsUnitTypes.LayoutMillimeters))
        lmap.setLayers([sub, ref])
        lmap.setExtent(zoom)
        lmap.setFrameEnabled(True)
        layout.addLayoutItem(lmap)
        legend = QgsLayoutItemLegend(layout)
        legend.setTitle("geoeval")
        legend.setLinkedMap(lmap)
        legend.setAutoUpdateModel(False)
        root = legend.model().rootGroup()
        root.removeAllChildren()
        for layer in (sub, ref):
            root.addLayer(layer)
        legend.attemptMove(QgsLayoutPoint(170, 5, QgsUnitTypes.LayoutMillimeters))
        layout.addLayoutItem(legend)
        bar = QgsLayoutItemScaleBar(layout)
        bar.setStyle("Single Box")
        bar.setLinkedMap(lmap)
        bar.applyDefaultSize()
        bar.setUnits(QgsUnitTypes.DistanceMeters)
        bar.setNumberOfSegments(2)
        bar.setNumberOfSegmentsLeft(0)
        bar.setUnitsPerSegment(20.0)
        bar.setUnitLabel("m")
        bar.attemptMove(QgsLayoutPoint(170, 140, QgsUnitTypes.LayoutMillimeters))
        layout.addLayoutItem(bar)
        exporter = QgsLayoutExporter(layout)
        settings_img = QgsLayoutExporter.ImageExportSettings()
        settings_img.dpi = 110
        result = exporter.exportToImage(os.path.join(out_dir, "layout.png"), settings_img)
        findings["layout_saved"] = result == QgsLayoutExporter.Success
        project.clear()
    write(findings, out_dir)  # before exitQgis(), which may crash
    app.exitQgis()
    return findings


def write(findings: dict, out_dir: str) -> None:
    with open(os.path.join(out_dir, "findings.json"), "w", encoding="utf-8") as fh:
        json.dump(findings, fh, indent=1)
        fh.flush()
        os.fsync(fh.fileno())


if __name__ == "__main__":
    out_dir = sys.argv[2]
    try:
        main(sys.argv[1], out_dir)
    except Exception:
        write({"error": traceback.format_exc()}, out_dir)
    os._exit(0)
