"""The Processing algorithms ``geoeval:score`` and ``geoeval:rank``.

Each algorithm exports the layers geoeval cannot read as they are
(:mod:`.layers`, in ``prepareAlgorithm``, on QGIS's main thread), then runs
``geoeval score``/``geoeval rank`` in its own environment (:mod:`.cli`) with
every output written into a private folder, and only when geoeval has
succeeded moves the files to the destinations the user chose: a failed or
cancelled run leaves no output.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from typing import Any

from qgis.core import (
    QgsFeature,
    QgsFeatureSink,
    QgsField,
    QgsFields,
    QgsProcessing,
    QgsProcessingAlgorithm,
    QgsProcessingContext,
    QgsProcessingException,
    QgsProcessingLayerPostProcessorInterface,
    QgsProcessingOutputVectorLayer,
    QgsProcessingParameterBoolean,
    QgsProcessingParameterCrs,
    QgsProcessingParameterDefinition,
    QgsProcessingParameterEnum,
    QgsProcessingParameterFeatureSink,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterMapLayer,
    QgsProcessingParameterMultipleLayers,
    QgsProcessingParameterNumber,
    QgsProcessingParameterString,
    QgsProcessingParameterVectorLayer,
    QgsProcessingUtils,
    QgsVectorLayer,
    QgsWkbTypes,
)
from qgis.PyQt.QtCore import QCoreApplication, QVariant

from . import cli
from .layers import as_input, no_sidecar_files, reopen_without_statistics, safe_name

#: The status layers of ``--gpkg``: output name, GeoPackage layer, description.
STATUS_LAYERS = (
    ("INSTANCES_LAYER", "instances", "Match instances"),
    ("REFERENCE_LAYER", "reference", "Reference objects by status"),
    ("SUBMISSION_LAYER", "submission", "Submitted objects by status"),
    ("SUMMARY_TABLE", "summary", "Summary table"),
)


class StoredStyle(QgsProcessingLayerPostProcessorInterface):
    """Applies the style geoeval stored in the GeoPackage (its ``layer_styles``
    table) when Processing loads a status layer: Processing loads result layers
    without their default style."""

    def postProcessLayer(self, layer, context, feedback) -> None:  # noqa: N802
        _, ok = layer.loadDefaultStyle()
        if not ok:
            feedback.pushWarning(f"{layer.name()}: the stored style could not be applied")
        layer.triggerRepaint()


#: Post-processors handed to Processing. The context that loads the layers owns
#: and deletes them (one instance per layer, never shared); this list keeps their
#: Python side alive until then.
_POST_PROCESSORS: list[StoredStyle] = []


def stored_style() -> StoredStyle:
    processor = StoredStyle()
    _POST_PROCESSORS.append(processor)
    del _POST_PROCESSORS[:-64]
    return processor


def tr(text: str) -> str:
    return QCoreApplication.translate("geoeval", text)


class GeoevalAlgorithm(QgsProcessingAlgorithm):
    """What ``geoeval:score`` and ``geoeval:rank`` share: parameters built from
    :mod:`.cli`'s option table, the private folder, running the command."""

    OPTIONS: tuple[cli.Option, ...] = ()

    def __init__(self) -> None:
        super().__init__()
        self.folder: str | None = None
        self.inputs: dict[str, Any] = {}
        self.rename: dict[str, str] = {}

    def group(self) -> str:
        return ""

    def groupId(self) -> str:
        return ""

    def icon(self):
        provider = self.provider()
        return provider.icon() if provider is not None else super().icon()

    # -- parameters ------------------------------------------------------------------
    def add_options(self, options: tuple[cli.Option, ...]) -> None:
        for o in options:
            self.addParameter(parameter(o))

    def option_values(self, parameters: dict, context: QgsProcessingContext) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for o in self.OPTIONS:
            raw = parameters.get(o.name)
            if raw is None or raw == "":
                continue
            if o.kind == "double":
                out[o.name] = self.parameterAsDouble(parameters, o.name, context)
            elif o.kind == "int":
                out[o.name] = self.parameterAsInt(parameters, o.name, context)
            elif o.kind == "bool":
                out[o.name] = self.parameterAsBoolean(parameters, o.name, context)
            elif o.kind in ("enum", "switch"):
                out[o.name] = self.parameterAsEnumString(parameters, o.name, context) or None
            elif o.kind in ("enums", "list"):
                chosen = [v for v in self.parameterAsEnumStrings(parameters, o.name, context)
                          if v]
                out[o.name] = chosen or None
            elif o.kind == "crs":
                crs = self.parameterAsCrs(parameters, o.name, context)
                out[o.name] = (crs.authid() or crs.toWkt()) if crs.isValid() else None
            else:
                out[o.name] = self.parameterAsString(parameters, o.name, context) or None
        return out

    # -- running ---------------------------------------------------------------------
    def make_folder(self) -> str:
        self.folder = tempfile.mkdtemp(prefix="geoeval_", dir=QgsProcessingUtils.tempFolder())
        return self.folder

    def cleanup(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def layer_input(self, layer, what: str, context, *, selected: bool = False,
                    always_export: bool = False, subfolder: str = "",
                    name: str | None = None):
        """``layer`` as a file for geoeval, exported (under the layer's name, which
        geoeval's reports show) into ``subfolder`` of the run's folder when needed."""
        if layer is None:
            raise QgsProcessingException(f"{what}: no layer given")
        folder = os.path.join(self.folder, subfolder)
        os.makedirs(folder, exist_ok=True)
        item = as_input(layer, what, folder, context, selected_only=selected,
                        always_export=always_export, name=name)
        if item.exported:
            self.rename[item.path] = layer.name()
        return item

    def run_geoeval(self, args: list[str], feedback, stages: cli.Stages) -> None:
        command = self.provider().command() if self.provider() is not None else None
        if command is None:
            raise QgsProcessingException(self.provider().problem())
        flags = cli.flag_parameters(self.OPTIONS)
        try:
            cli.run(command, args, feedback, stages, rename=self.rename, flags=flags)
        except cli.Cancelled:
            raise QgsProcessingException("geoeval: cancelled; no output was written") from None
        except cli.GeoevalError as exc:
            raise QgsProcessingException(str(exc)) from None

    def checkParameterValues(self, parameters, context):  # noqa: N802
        """Processing's checks, after the rasters given as file paths are reopened
        without statistics files (:func:`.layers.reopen_without_statistics`):
        Processing (``qgis_process``, a path typed in the dialog) loads such a layer
        before any of our code runs, and GDAL would write the statistics QGIS computed
        for it into an ``.aux.xml`` beside the user's raster when it is closed."""
        for p in self.parameterDefinitions():
            if isinstance(p, (QgsProcessingParameterMapLayer, QgsProcessingParameterVectorLayer,
                              QgsProcessingParameterMultipleLayers)):
                value = parameters.get(p.name())
                for item in value if isinstance(value, (list, tuple)) else [value]:
                    if isinstance(item, str):
                        reopen_without_statistics(item, context)
        with no_sidecar_files():
            return super().checkParameterValues(parameters, context)

    def prepareAlgorithm(self, parameters, context, feedback) -> bool:  # noqa: N802
        """The inputs as files (:meth:`prepare_inputs`), layers opened without
        statistics files beside the user's rasters; the run's folder removed on failure."""
        self.make_folder()
        try:
            with no_sidecar_files():
                self.prepare_inputs(parameters, context)
        except Exception:
            self.cleanup()
            raise
        return True

    def prepare_inputs(self, parameters, context) -> None:
        """Fill :attr:`inputs` from the layer parameters (each algorithm its own)."""

    def canExecute(self):
        provider = self.provider()
        if provider is None or provider.command() is None:
            return False, provider.problem() if provider is not None else "no provider"
        return True, ""

    def postProcessAlgorithm(self, context, feedback):
        self.cleanup()
        return {}

    def __del__(self) -> None:
        try:
            self.cleanup()
        except Exception:  # noqa: BLE001 - never raise from a destructor
            pass


def parameter(o: cli.Option) -> QgsProcessingParameterDefinition:
    """The Processing parameter of one option (help text, CLI default)."""
    if o.kind in ("double", "int"):
        kind = (QgsProcessingParameterNumber.Double if o.kind == "double"
                else QgsProcessingParameterNumber.Integer)
        p = QgsProcessingParameterNumber(o.name, tr(o.description), kind, o.default,
                                         o.optional)
    elif o.kind == "bool":
        p = QgsProcessingParameterBoolean(o.name, tr(o.description), bool(o.default))
    elif o.kind in ("enum", "enums", "list", "switch"):
        multiple = o.kind in ("enums", "list")
        default = list(o.default) if multiple and o.default else o.default
        p = QgsProcessingParameterEnum(o.name, tr(o.description), list(o.choices),
                                       multiple, default, o.optional)
        p.setUsesStaticStrings(True)
    elif o.kind == "crs":
        p = QgsProcessingParameterCrs(o.name, tr(o.description), None, True)
    else:
        p = QgsProcessingParameterString(o.name, tr(o.description), o.default, False,
                                         o.optional)
    p.setHelp(tr(o.help + (f" (geoeval {o.flag})" if o.flag else "")))
    if o.advanced:
        p.setFlags(p.flags() | QgsProcessingParameterDefinition.FlagAdvanced)
    return p


def _selected(parameters: dict, name: str, flag: bool) -> bool:
    """Selected features only: the box, or a ``QgsProcessingFeatureSourceDefinition``
    with ``selectedFeaturesOnly`` given from Python."""
    value = parameters.get(name)
    return bool(flag or getattr(value, "selectedFeaturesOnly", False))


class ScoreAlgorithm(GeoevalAlgorithm):
    """``geoeval:score``: one submission against a reference."""

    OPTIONS = cli.SCORE_OPTIONS

    def name(self) -> str:
        return "score"

    def displayName(self) -> str:
        return tr("Score detections against a reference")

    def shortHelpString(self) -> str:
        return tr(
            "Scores the objects of a submission (detected buildings, fields, …) against a "
            "reference layer with geoeval: object counts, precision, recall, F1 and accuracy "
            "for each matcher (bipartite graph matching; Hoover et al. 1996; MOM and the "
            "Mallows score, Özdemir et al. 2010; IoU), as <code>geoeval score</code> does.\n\n"
            "Reference and submission are polygon layers (any OGR source, memory layers, "
            "selected features only when the box is ticked) or single-band rasters of "
            "integer labels (0 = background).\n\n"
            "Outputs: the reference, submission and match-instance layers, styled by status "
            "(matched / missed / false alarm; one-to-one, split, merged) as in "
            "<code>--gpkg</code>; the summary as a table and as HTML; the JSON report "
            "(the same as <code>geoeval score --json</code>).\n\n"
            "geoeval runs as its own program (Settings ▸ Options ▸ Processing ▸ Providers ▸ "
            "geoeval), so QGIS's Python is untouched. Cancel stops it and writes nothing.")

    def createInstance(self):
        return ScoreAlgorithm()

    def initAlgorithm(self, config=None) -> None:
        layers = [QgsProcessing.TypeVectorPolygon, QgsProcessing.TypeRaster]
        for name, label in (("REFERENCE", "Reference layer"),
                            ("SUBMISSION", "Submission layer")):
            p = QgsProcessingParameterMapLayer(name, tr(label), None, False, layers)
            p.setHelp(tr(f"{label}: polygons, or a single-band raster of integer labels."))
            self.addParameter(p)
            self.addParameter(QgsProcessingParameterBoolean(
                f"{name}_SELECTED", tr(f"{label.split()[0]}: selected features only"), False))
        self.add_options(self.OPTIONS)
        zones = QgsProcessingParameterVectorLayer(
            "ZONES", tr("Zones layer (strata)"), [QgsProcessing.TypeVectorPolygon], None, True)
        zones.setHelp(tr("Also score by zone: each object goes to the zone holding its "
                         "representative point, or to 'outside' (geoeval --zones)."))
        zones.setFlags(zones.flags() | QgsProcessingParameterDefinition.FlagAdvanced)
        self.addParameter(zones)
        self.addParameter(QgsProcessingParameterFileDestination(
            "JSON", tr("JSON report"), tr("JSON files (*.json)"), QgsProcessing.TEMPORARY_OUTPUT,
            True, True))
        self.addParameter(QgsProcessingParameterFileDestination(
            "GPKG", tr("Styled GeoPackage"), tr("GeoPackage files (*.gpkg)"),
            QgsProcessing.TEMPORARY_OUTPUT, True, True))
        self.addParameter(QgsProcessingParameterFileDestination(
            "HTML", tr("HTML report"), tr("HTML files (*.html)"), QgsProcessing.TEMPORARY_OUTPUT,
            True, True))
        self.addParameter(QgsProcessingParameterFileDestination(
            "FIGURE", tr("Status map and score chart"), tr("PNG files (*.png)"), None, True,
            False))
        for name, _, description in STATUS_LAYERS:
            self.addOutput(QgsProcessingOutputVectorLayer(name, tr(description)))

    def prepare_inputs(self, parameters, context) -> None:
        for name in ("REFERENCE", "SUBMISSION"):
            layer = self.parameterAsLayer(parameters, name, context)
            selected = _selected(parameters, name, self.parameterAsBoolean(
                parameters, f"{name}_SELECTED", context))
            self.inputs[name] = self.layer_input(layer, name, context, selected=selected,
                                                 subfolder=name.lower())
        zones = self.parameterAsVectorLayer(parameters, "ZONES", context)
        if zones is not None:
            self.inputs["ZONES"] = self.layer_input(zones, "ZONES", context,
                                                    always_export=True, subfolder="zones")

    def processAlgorithm(self, parameters, context, feedback) -> dict[str, Any]:
        try:
            return self._process(parameters, context, feedback)
        finally:
            self.cleanup()

    def _process(self, parameters, context, feedback) -> dict[str, Any]:
        values = self.option_values(parameters, context)
        ref, sub = self.inputs["REFERENCE"], self.inputs["SUBMISSION"]
        stage = self.folder
        report, gpkg = os.path.join(stage, "report.json"), os.path.join(stage, "result.gpkg")
        args = ["score", ref.path, sub.path]
        if ref.layer:
            args += ["--ref-layer", ref.layer]
        if sub.layer:
            args += ["--sub-layer", sub.layer]
        if "ZONES" in self.inputs:
            args += ["--zones", self.inputs["ZONES"].path]
        args += cli.cli_args(self.OPTIONS, values)
        figure = self.parameterAsFileOutput(parameters, "FIGURE", context)
        staged_figure = os.path.join(stage, "figure.png") if figure else None
        html_path = self.parameterAsFileOutput(parameters, "HTML", context)
        staged_html = os.path.join(stage, "report.html") if html_path else None
        args += ["--json", report, "--gpkg", gpkg, "--quiet"]
        if staged_figure:
            args += ["--figure", staged_figure]
        if staged_html:
            args += ["--html", staged_html]
        matchers = values.get("MATCHERS") or list(cli.MATCHERS)
        self.run_geoeval(args, feedback,
                         cli.score_stages(matchers, bool(values.get("MALLOWS"))))
        if feedback.isCanceled():
            raise QgsProcessingException("geoeval: cancelled; no output was written")

        with open(report, encoding="utf-8") as fh:
            data = json.load(fh)
        names = {"reference": self._layer_name(parameters, "REFERENCE", context),
                 "submission": self._layer_name(parameters, "SUBMISSION", context)}
        results: dict[str, Any] = {}
        json_path = _destination(self.parameterAsFileOutput(parameters, "JSON", context),
                                 "report.json")
        gpkg_path = _destination(self.parameterAsFileOutput(parameters, "GPKG", context),
                                 "result.gpkg")
        _move(report, json_path)
        _move(gpkg, gpkg_path)
        results["JSON"], results["GPKG"] = json_path, gpkg_path
        if staged_figure:
            _move(staged_figure, figure)
            results["FIGURE"] = figure
        if staged_html:
            _move(staged_html, html_path)
            results["HTML"] = html_path
        for out, layer, _ in STATUS_LAYERS:
            uri = f"{gpkg_path}|layername={layer}"
            results[out] = uri
            if context.project() is not None:
                details = QgsProcessingContext.LayerDetails(
                    f"{layer} ({names['submission']})", context.project(), out)
                if layer != "summary":
                    details.setPostProcessor(stored_style())
                context.addLayerToLoadOnCompletion(uri, details)
        feedback.pushInfo(self._summary_line(data))
        return results

    def _layer_name(self, parameters, name, context) -> str:
        with no_sidecar_files():
            layer = self.parameterAsLayer(parameters, name, context)
        return layer.name() if layer is not None else name.lower()

    @staticmethod
    def _summary_line(data: dict) -> str:
        parts = []
        for m, r in (data.get("results") or {}).items():
            f1 = r.get("f1")
            parts.append(f"{m} F1 {f1:.4f}" if isinstance(f1, float) else f"{m} F1 –")
        return "geoeval: " + ", ".join(parts)


class RankAlgorithm(GeoevalAlgorithm):
    """``geoeval:rank``: several submissions against one reference."""

    OPTIONS = cli.RANK_OPTIONS

    def name(self) -> str:
        return "rank"

    def displayName(self) -> str:
        return tr("Rank submissions")

    def shortHelpString(self) -> str:
        return tr(
            "Ranks several submissions against one reference as <code>geoeval rank</code> "
            "does (Özdemir et al. 2010, §4.3): each submission is scored with one matcher; "
            "its precision, recall and accuracy are the indicators; submissions are ordered "
            "by dominance (a Hasse diagram), with rank intervals and rank frequencies over "
            "the linear extensions, and the iterated cumulative rank frequency decides the "
            "final rank.\n\n"
            "Submissions are named after their layers. Outputs: the rank table (a table "
            "layer and HTML with the Hasse diagram) and the JSON report (the same as "
            "<code>geoeval rank --json</code>).")

    def createInstance(self):
        return RankAlgorithm()

    def initAlgorithm(self, config=None) -> None:
        p = QgsProcessingParameterMapLayer(
            "REFERENCE", tr("Reference layer"), None, False,
            [QgsProcessing.TypeVectorPolygon, QgsProcessing.TypeRaster])
        p.setHelp(tr("Reference: polygons, or a single-band raster of integer labels."))
        self.addParameter(p)
        self.addParameter(QgsProcessingParameterBoolean(
            "REFERENCE_SELECTED", tr("Reference: selected features only"), False))
        subs = QgsProcessingParameterMultipleLayers(
            "SUBMISSIONS", tr("Submission layers"), QgsProcessing.TypeMapLayer)
        subs.setMinimumNumberInputs(2)
        subs.setHelp(tr("Two or more submissions: polygon layers or label rasters; each is "
                        "named after its layer."))
        self.addParameter(subs)
        self.addParameter(QgsProcessingParameterBoolean(
            "SUBMISSIONS_SELECTED", tr("Submissions: selected features only"), False))
        self.add_options(self.OPTIONS)
        self.addParameter(QgsProcessingParameterFileDestination(
            "JSON", tr("JSON report"), tr("JSON files (*.json)"), QgsProcessing.TEMPORARY_OUTPUT,
            True, True))
        self.addParameter(QgsProcessingParameterFeatureSink(
            "OUTPUT", tr("Rank table"), QgsProcessing.TypeVector, QgsProcessing.TEMPORARY_OUTPUT,
            True, True))
        self.addParameter(QgsProcessingParameterFileDestination(
            "HTML", tr("Rank table and Hasse diagram (HTML)"), tr("HTML files (*.html)"),
            QgsProcessing.TEMPORARY_OUTPUT, True, True))
        self.addParameter(QgsProcessingParameterFileDestination(
            "FIGURE", tr("Hasse diagram and rank frequencies"), tr("PNG files (*.png)"), None,
            True, False))

    def prepare_inputs(self, parameters, context) -> None:
        ref = self.parameterAsLayer(parameters, "REFERENCE", context)
        self.inputs["REFERENCE"] = self.layer_input(
            ref, "REFERENCE", context, selected=_selected(
                parameters, "REFERENCE", self.parameterAsBoolean(
                    parameters, "REFERENCE_SELECTED", context)), subfolder="reference")
        subs = self.parameterAsLayerList(parameters, "SUBMISSIONS", context)
        if len(subs) < 2:
            raise QgsProcessingException("SUBMISSIONS: give at least two submission layers")
        selected = self.parameterAsBoolean(parameters, "SUBMISSIONS_SELECTED", context)
        taken: set[str] = set()
        items = []
        for layer in subs:
            name = safe_name(layer.name())
            k = 2
            while name.lower() in taken:
                name, k = f"{safe_name(layer.name())}_{k}", k + 1
            taken.add(name.lower())
            os.makedirs(os.path.join(self.folder, "submissions"), exist_ok=True)
            items.append(as_input(
                layer, "SUBMISSIONS", os.path.join(self.folder, "submissions"), context,
                selected_only=selected and isinstance(layer, QgsVectorLayer),
                always_export=True, name=name))
            self.rename[items[-1].path] = layer.name()
        self.inputs["SUBMISSIONS"] = items

    def processAlgorithm(self, parameters, context, feedback) -> dict[str, Any]:
        try:
            return self._process(parameters, context, feedback)
        finally:
            self.cleanup()

    def _process(self, parameters, context, feedback) -> dict[str, Any]:
        values = self.option_values(parameters, context)
        ref = self.inputs["REFERENCE"]
        stage = self.folder
        report, figure = os.path.join(stage, "rank.json"), os.path.join(stage, "hasse.png")
        staged_html = os.path.join(stage, "rank.html")
        args = ["rank", ref.path, *[s.path for s in self.inputs["SUBMISSIONS"]]]
        if ref.layer:
            args += ["--ref-layer", ref.layer]
        args += cli.cli_args(self.OPTIONS, values)
        html_path = self.parameterAsFileOutput(parameters, "HTML", context)
        figure_path = self.parameterAsFileOutput(parameters, "FIGURE", context)
        args += ["--json", report, "--quiet"]
        if html_path:
            args += ["--html", staged_html]
        if figure_path:
            args += ["--figure", figure]
        self.run_geoeval(args, feedback, cli.Stages(cli.rank_plan()))
        if feedback.isCanceled():
            raise QgsProcessingException("geoeval: cancelled; no output was written")
        with open(report, encoding="utf-8") as fh:
            data = json.load(fh)

        rows = cli.rank_rows(data)
        fields = QgsFields()
        fields.append(QgsField("rank", QVariant.Int))
        fields.append(QgsField("name", QVariant.String))
        indicators = list(data.get("indicators") or [])
        for c in indicators:
            fields.append(QgsField(c, QVariant.Double))
        fields.append(QgsField("interval_low", QVariant.Int))
        fields.append(QgsField("interval_high", QVariant.Int))
        fields.append(QgsField("expected_rank", QVariant.Double))
        fields.append(QgsField("first_in_orderings", QVariant.Double))
        json_path = _destination(self.parameterAsFileOutput(parameters, "JSON", context),
                                 "rank.json")
        results: dict[str, Any] = {"JSON": json_path}
        sink, dest = self.parameterAsSink(parameters, "OUTPUT", context, fields,
                                          QgsWkbTypes.NoGeometry)
        if sink is not None:  # None: the optional table was skipped
            for row in rows:
                feature = QgsFeature(fields)
                feature.setAttributes([row["rank"], row["name"], *[row[c] for c in indicators],
                                       row["interval_low"], row["interval_high"],
                                       row["expected_rank"], row["first_in_orderings"]])
                sink.addFeature(feature, QgsFeatureSink.FastInsert)
            results["OUTPUT"] = dest
        if html_path:
            _move(staged_html, html_path)
            results["HTML"] = html_path
        if figure_path:
            _move(figure, figure_path)
            results["FIGURE"] = figure_path
        _move(report, json_path)
        feedback.pushInfo("geoeval: ranking " + " > ".join(r["name"] for r in rows))
        return results


def _destination(path: str, name: str) -> str:
    """A skipped (or, with qgis_process, omitted) JSON/GeoPackage output: a temporary
    file, since the algorithm reads the report and loads the layers from them."""
    return path or QgsProcessingUtils.generateTempFilename(name)


def _move(source: str, target: str) -> None:
    """Move a finished output into place (replacing an older file of that name)."""
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        os.makedirs(folder, exist_ok=True)
    shutil.move(source, target)
