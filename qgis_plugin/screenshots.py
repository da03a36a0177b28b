"""Screenshots of the plugin in a real QGIS window, for docs/qgis.md.

Not part of the plugin ZIP. Run inside the QGIS desktop application (under Xvfb
on a machine without a display), with the plugin installed and enabled in the
profile, e.g.::

    GEOEVAL_SHOTS=docs/img GEOEVAL_SAMPLE=sample_data GEOEVAL_COMMAND=…/bin/geoeval \\
    QGIS_CUSTOM_CONFIG_PATH=… xvfb-run -a -s "-screen 0 1600x1000x24" \\
        qgis --nologo --code qgis_plugin/screenshots.py

Adds the sample's reference buildings and the s9 submission to the project,
opens *Score detections against a reference* from the Processing Toolbox
(``processing.createAlgorithmDialog``) and saves the dialog
(``qgis_plugin_dialog.png``), runs it and saves the dialog while geoeval runs
(``qgis_plugin_running.png``), then saves the main window with the styled
result layers and the summary in the Results Viewer (``qgis_plugin_result.png``),
and quits QGIS. The algorithm's own outputs go to a temporary folder.
"""

import os
import tempfile

import processing
from qgis.core import QgsProject, QgsRectangle, QgsVectorLayer
from qgis.PyQt.QtCore import QTimer
from qgis.PyQt.QtWidgets import QProgressBar
from qgis.utils import iface

OUT = os.environ["GEOEVAL_SHOTS"]
SAMPLE = os.environ["GEOEVAL_SAMPLE"]
RESULTS = tempfile.mkdtemp(prefix="geoeval_shots_")  # the algorithm's outputs
STATE = {"ticks": 0, "running": False, "shot_running": False}


def log(text):
    with open(os.path.join(OUT, "screenshots.log"), "a", encoding="utf-8") as fh:
        fh.write(text + "\n")


def save(widget, name):
    ok = widget.grab().save(os.path.join(OUT, name), "PNG")
    log(f"{name}: {ok}")


window = iface.mainWindow()
window.resize(1500, 950)
window.move(0, 0)
ref = QgsVectorLayer(os.path.join(SAMPLE, "reference.gpkg") + "|layername=buildings",
                     "reference buildings", "ogr")
sub = QgsVectorLayer(os.path.join(SAMPLE, "submissions", "s9_blobby.shp"), "s9_blobby", "ogr")
QgsProject.instance().addMapLayers([ref, sub])
before = len(QgsProject.instance().mapLayers())
dialog = processing.createAlgorithmDialog("geoeval:score", {
    "REFERENCE": ref.id(), "SUBMISSION": sub.id(), "ID_FIELD": "id", "CLASS_FIELD": "class",
    "JSON": os.path.join(RESULTS, "s9.json"), "GPKG": os.path.join(RESULTS, "s9.gpkg"),
    "HTML": os.path.join(RESULTS, "s9.html")})
dialog.resize(1000, 760)
dialog.move(250, 100)
dialog.show()


def tick():
    try:
        step()
    except Exception:  # noqa: BLE001 - logged, then QGIS quits
        import traceback

        log(traceback.format_exc())
        os._exit(1)


def step():
    STATE["ticks"] += 1
    if STATE["ticks"] == 6:  # 3 s: the dialog is drawn
        save(dialog, "qgis_plugin_dialog.png")
        STATE["running"] = True
        dialog.runAlgorithm()
        return
    if STATE["running"] and not STATE["shot_running"]:
        bar = dialog.findChild(QProgressBar)
        if bar.value() >= 45:
            save(dialog, "qgis_plugin_running.png")
            STATE["shot_running"] = True
    if STATE["running"] and len(QgsProject.instance().mapLayers()) >= before + 4:
        if "loaded" not in STATE:
            STATE["loaded"] = STATE["ticks"]
            save(dialog, "qgis_plugin_finished.png")
            dialog.close()
            canvas = iface.mapCanvas()
            full = ref.extent()
            cx, cy = full.center().x(), full.center().y()
            canvas.setExtent(QgsRectangle(cx - 90, cy - 60, cx + 90, cy + 60))
            for layer in (ref, sub):
                node = QgsProject.instance().layerTreeRoot().findLayer(layer.id())
                node.setItemVisibilityChecked(False)
            canvas.refreshAllLayers()
        elif STATE["ticks"] - STATE["loaded"] == 12:  # 6 s: the map is drawn
            save(window, "qgis_plugin_result.png")
            log("done")
            os._exit(0)  # QGIS may crash tearing down a scripted session
    if STATE["ticks"] > 600:  # 5 minutes: give up
        log("timeout")
        os._exit(1)


timer = QTimer()
timer.timeout.connect(tick)
timer.start(500)
