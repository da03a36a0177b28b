"""Drive the geoeval Processing plugin inside PyQGIS (run by test_qgis_plugin.py).

Runs under Debian's ``/usr/bin/python3`` (``python3-qgis``), not geoeval's
environment: only the standard library and QGIS are imported; the plugin
finds geoeval through ``$GEOEVAL_COMMAND``. Usage::

    QT_QPA_PLATFORM=offscreen QGIS_CUSTOM_CONFIG_PATH=CFG GEOEVAL_COMMAND=… \\
        /usr/bin/python3 tests/qgis_plugin_check.py MODE OUT_DIR ARGS…

Modes:

``memory REF SUB X0 Y0``
    Copies both layers into memory layers, selects the features whose centroid
    has ``x < X0`` and ``y < Y0``, runs ``geoeval:score`` with "selected
    features only" ticked and the default matchers, loads the results as the
    Processing dialog does (``handleAlgorithmResults``) and reports the
    project's layers (valid, renderer, categories).
``layers GPKG``
    Loads the four layers of a GeoPackage written by the algorithm.
``cancel REF SUB``
    Runs ``geoeval:score`` with a feedback that cancels once geoeval reports
    its first matching step; reports the exception, how long stopping took,
    what is left in the output folder and whether a geoeval process is left.

Writes ``OUT_DIR/findings.json`` before QGIS exits, then ``os._exit(0)``.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback

KEEP: list = []


def start():
    from qgis.core import QgsApplication

    QgsApplication.setPrefixPath("/usr", True)
    app = QgsApplication([], False)
    app.initQgis()
    sys.path.append("/usr/share/qgis/python/plugins")
    from processing.core.Processing import Processing

    Processing.initialize()
    plugins = os.path.join(QgsApplication.qgisSettingsDirPath(), "python", "plugins")
    sys.path.insert(0, plugins)
    import qgis.utils

    assert qgis.utils.loadPlugin("geoeval_processing"), "cannot load geoeval_processing"
    assert qgis.utils.startProcessingPlugin("geoeval_processing"), "cannot start it"
    return app


def layer_info(layer) -> dict:
    info = {"name": layer.name(), "valid": layer.isValid(), "source": layer.source()}
    if layer.isValid() and hasattr(layer, "featureCount"):
        info["features"] = layer.featureCount()
        info["spatial"] = layer.isSpatial()
        renderer = layer.renderer() if layer.isSpatial() else None
        if renderer is not None:
            info["renderer"] = renderer.type()
            if renderer.type() == "categorizedSymbol":
                info["attribute"] = renderer.classAttribute()
                info["categories"] = {c.value(): {"label": c.label(),
                                                  "colour": c.symbol().color().name()}
                                      for c in renderer.categories()}
    return info


def memory_copy(path: str, name: str):
    from qgis.core import QgsFeature, QgsVectorLayer

    source = QgsVectorLayer(path, name, "ogr")
    assert source.isValid(), path
    uri = f"MultiPolygon?crs={source.crs().authid()}"
    mem = QgsVectorLayer(uri, name, "memory")
    provider = mem.dataProvider()
    provider.addAttributes(source.fields().toList())
    mem.updateFields()
    features = []
    for f in source.getFeatures():
        g = QgsFeature(mem.fields())
        g.setGeometry(f.geometry())
        g.setAttributes(f.attributes())
        features.append(g)
    provider.addFeatures(features)
    mem.updateExtents()
    return mem


def mode_memory(out: str, ref: str, sub: str, x0: str, y0: str) -> dict:
    import processing
    from processing.gui.Postprocessing import handleAlgorithmResults
    from qgis.core import (
        QgsApplication,
        QgsProcessingContext,
        QgsProcessingFeedback,
        QgsProject,
    )

    project = QgsProject.instance()
    layers = {}
    for key, path in (("reference", ref), ("submission", sub)):
        mem = memory_copy(path, f"{key} memory")
        project.addMapLayer(mem)
        mem.selectByExpression(f"x(centroid($geometry)) < {x0} AND "
                               f"y(centroid($geometry)) < {y0}")
        layers[key] = mem
    found = {"selected": {k: v.selectedFeatureCount() for k, v in layers.items()},
             "totals": {k: v.featureCount() for k, v in layers.items()},
             "providers": {k: v.providerType() for k, v in layers.items()}}
    alg = QgsApplication.processingRegistry().algorithmById("geoeval:score")
    found["algorithm"] = alg is not None and alg.id()
    found["parameters"] = [p.name() for p in alg.parameterDefinitions()]
    found["help"] = {p.name(): p.help() for p in alg.parameterDefinitions()}
    found["short_help"] = alg.shortHelpString()
    context = QgsProcessingContext()
    context.setProject(project)
    progress, texts = [], []

    class Feedback(QgsProcessingFeedback):
        def setProgressText(self, text):  # noqa: N802
            texts.append(text)
            super().setProgressText(text)

    feedback = Feedback()
    feedback.progressChanged.connect(progress.append)
    params = {"REFERENCE": layers["reference"].id(), "REFERENCE_SELECTED": True,
              "SUBMISSION": layers["submission"].id(), "SUBMISSION_SELECTED": True,
              "JSON": os.path.join(out, "memory.json"),
              "GPKG": os.path.join(out, "memory.gpkg"),
              "HTML": os.path.join(out, "memory.html")}
    start_time = time.monotonic()
    results = processing.run("geoeval:score", params, context=context, feedback=feedback)
    found["seconds"] = time.monotonic() - start_time
    found["results"] = {k: str(v) for k, v in results.items()}
    found["progress"] = progress
    found["progress_texts"] = texts
    found["to_load"] = sorted(context.layersToLoadOnCompletion())
    alg_instance = alg.create()
    found["loaded_ok"] = handleAlgorithmResults(alg_instance, context, feedback)
    found["project_layers"] = {lay.name(): layer_info(lay)
                               for lay in project.mapLayers().values()
                               if lay not in layers.values()}
    KEEP.extend([context, feedback, alg_instance, layers])  # QGIS may crash destroying them
    return found


def mode_layers(out: str, gpkg: str) -> dict:
    from qgis.core import QgsVectorLayer

    return {"layers": {name: layer_info(QgsVectorLayer(f"{gpkg}|layername={name}", name, "ogr"))
                       for name in ("reference", "submission", "instances", "summary")}}


def mode_cancel(out: str, ref: str, sub: str) -> dict:
    import processing
    from qgis.core import QgsProcessingContext, QgsProcessingException, QgsProcessingFeedback

    found: dict = {"texts": []}
    state = {"cancelled_at": None}

    class Feedback(QgsProcessingFeedback):
        def setProgressText(self, text):  # noqa: N802
            found["texts"].append(text)
            if text.startswith("matching") and state["cancelled_at"] is None:
                state["cancelled_at"] = time.monotonic()
                self.cancel()
            super().setProgressText(text)

    dest = os.path.join(out, "cancel")
    os.makedirs(dest)
    params = {"REFERENCE": ref, "SUBMISSION": sub, "JSON": os.path.join(dest, "c.json"),
              "GPKG": os.path.join(dest, "c.gpkg"), "HTML": os.path.join(dest, "c.html")}
    context, feedback = QgsProcessingContext(), Feedback()
    KEEP.extend([context, feedback])
    try:
        processing.run("geoeval:score", params, context=context, feedback=feedback)
        found["raised"] = None
    except QgsProcessingException as exc:
        found["raised"] = str(exc)
    found["stopped_after"] = (time.monotonic() - state["cancelled_at"]
                              if state["cancelled_at"] else None)
    found["left"] = sorted(os.listdir(dest))
    time.sleep(0.5)
    found["geoeval_processes"] = [c for c in _cmdlines() if "geoeval" in c and " score " in c
                                  and ref in c and "--quiet" in c]
    return found


def _cmdlines() -> list[str]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    out.append(fh.read().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                pass
    return out


def write(findings: dict, out_dir: str) -> None:
    with open(os.path.join(out_dir, "findings.json"), "w", encoding="utf-8") as fh:
        json.dump(findings, fh, indent=1)
        fh.flush()
        os.fsync(fh.fileno())


if __name__ == "__main__":
    mode, out_dir, *args = sys.argv[1:]
    try:
        app = start()
        findings = {"memory": mode_memory, "layers": mode_layers,
                    "cancel": mode_cancel}[mode](out_dir, *args)
        write(findings, out_dir)
    except Exception:
        write({"error": traceback.format_exc()}, out_dir)
    os._exit(0)
