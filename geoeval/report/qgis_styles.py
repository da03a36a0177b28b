"""QGIS layer styles (QML) for the GeoPackage layers, and the shared status colours.

QGIS reads a layer's default style from the GeoPackage table ``layer_styles``
(its own convention, also used by its "Save style to database" button) when
the layer is added: a categorised renderer on ``status`` for the reference and
submission layers and on ``kind`` for the instances, so the legend reads
"matched / missed", "matched / false alarm", "one-to-one / over / under" with
no manual styling. The same colours are used in the figures
(:mod:`geoeval.report.status_figure`).

The QML follows what QGIS 3.22 writes itself (``renderer-v2`` of type
``categorizedSymbol``, symbol layers as ``<Option type="Map">``); it is
checked by loading it in real QGIS (``tests/test_qgis.py``).
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from geoeval.matching.result import MANY_TO_ONE, ONE_TO_MANY, ONE_TO_ONE

#: Status -> fill colour (RGB), shared by the QGIS styles and the figures.
STATUS_COLOURS: dict[str, tuple[int, int, int]] = {
    "matched": (51, 160, 44),  # green
    "missed": (227, 26, 28),  # red
    "false_alarm": (255, 127, 0),  # orange
}
#: Outline colour of submitted objects (drawn as outlines over the reference).
SUBMISSION_MATCHED = (31, 120, 180)  # blue
#: Instance kind -> colour.
KIND_COLOURS: dict[str, tuple[int, int, int]] = {
    ONE_TO_ONE: (120, 120, 120),  # grey
    ONE_TO_MANY: (106, 61, 154),  # purple: over-detection (split)
    MANY_TO_ONE: (31, 170, 190),  # cyan: under-detection (merged)
}
KIND_LABELS = {ONE_TO_ONE: "one-to-one", ONE_TO_MANY: "one-to-many (over-detection)",
               MANY_TO_ONE: "many-to-one (under-detection)"}
STATUS_LABELS = {"matched": "matched", "missed": "missed", "false_alarm": "false alarm"}

STYLE_NAMES = {"reference": "geoeval status (reference)",
               "submission": "geoeval status (submission)",
               "instances": "geoeval instance kind"}


def hex_colour(rgb: tuple[int, int, int]) -> str:
    """``#rrggbb`` of an RGB triple."""
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _rgba(rgb: tuple[int, int, int], alpha: int) -> str:
    return f"{rgb[0]},{rgb[1]},{rgb[2]},{alpha}"


def _fill_symbol(name: str, fill: str, outline: str, width: float, style: str = "solid") -> str:
    props = {
        "border_width_map_unit_scale": "3x:0,0,0,0,0,0",
        "color": fill,
        "joinstyle": "bevel",
        "offset": "0,0",
        "offset_map_unit_scale": "3x:0,0,0,0,0,0",
        "offset_unit": "MM",
        "outline_color": outline,
        "outline_style": "solid",
        "outline_width": f"{width:g}",
        "outline_width_unit": "MM",
        "style": style,
    }
    options = "\n".join(f'            <Option type="QString" name="{k}" value="{v}"/>'
                        for k, v in props.items())
    return (
        f'      <symbol type="fill" name="{name}" alpha="1" clip_to_extent="1" force_rhr="0">\n'
        '        <data_defined_properties><Option type="Map"><Option type="QString" name="name" '
        'value=""/><Option name="properties"/><Option type="QString" name="type" '
        'value="collection"/></Option></data_defined_properties>\n'
        '        <layer class="SimpleFill" enabled="1" locked="0" pass="0">\n'
        '          <Option type="Map">\n'
        f"{options}\n"
        "          </Option>\n"
        "        </layer>\n"
        "      </symbol>"
    )


def _qml(attr: str, categories: list[tuple[str, str, str]]) -> str:
    """A QML document with a categorised renderer on ``attr``.

    ``categories``: (value, legend label, symbol xml with ``name`` = its index).
    """
    cats = "\n".join(
        f'      <category render="true" symbol="{i}" value={quoteattr(value)} '
        f'label={quoteattr(label)} type="string"/>'
        for i, (value, label, _) in enumerate(categories))
    symbols = "\n".join(sym for _, _, sym in categories)
    source = _fill_symbol("0", "190,190,190,255", "35,35,35,255", 0.26)
    return f"""<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>
<qgis version="3.22.16-Białowieża" styleCategories="Symbology" hasScaleBasedVisibilityFlag="0">
  <renderer-v2 type="categorizedSymbol" attr={quoteattr(attr)} symbollevels="0" forceraster="0" enableorderby="0" referencescale="-1">
    <categories>
{cats}
    </categories>
    <symbols>
{symbols}
    </symbols>
    <source-symbol>
{source}
    </source-symbol>
    <rotation/>
    <sizescale/>
  </renderer-v2>
  <blendMode>0</blendMode>
  <featureBlendMode>0</featureBlendMode>
  <layerGeometryType>2</layerGeometryType>
</qgis>
"""  # noqa: E501


def _label(name: str, counts: dict[str, int] | None, value: str) -> str:
    return name if counts is None else f"{name} ({counts.get(value, 0)})"


def reference_qml(counts: dict[str, int] | None = None) -> str:
    """Reference layer: filled, green matched and red missed (legend with counts)."""
    cats = []
    for i, value in enumerate(("matched", "missed")):
        rgb = STATUS_COLOURS[value]
        cats.append((value, _label(STATUS_LABELS[value], counts, value),
                     _fill_symbol(str(i), _rgba(rgb, 150), _rgba(rgb, 255), 0.26)))
    return _qml("status", cats)


def submission_qml(counts: dict[str, int] | None = None) -> str:
    """Submission layer: outlines only, blue matched and thick orange false alarms."""
    cats = [
        ("matched", _label("matched", counts, "matched"),
         _fill_symbol("0", "0,0,0,0", _rgba(SUBMISSION_MATCHED, 255), 0.4, "no")),
        ("false_alarm", _label("false alarm", counts, "false_alarm"),
         _fill_symbol("1", "0,0,0,0", _rgba(STATUS_COLOURS["false_alarm"], 255), 0.7, "no")),
    ]
    return _qml("status", cats)


def instances_qml(counts: dict[str, int] | None = None) -> str:
    """Instances layer: categorised on ``kind`` (one-to-one, over-, under-detection)."""
    cats = []
    for i, kind in enumerate((ONE_TO_ONE, ONE_TO_MANY, MANY_TO_ONE)):
        rgb = KIND_COLOURS[kind]
        cats.append((kind, _label(KIND_LABELS[kind], counts, kind),
                     _fill_symbol(str(i), _rgba(rgb, 90), _rgba(rgb, 255), 0.5)))
    return _qml("kind", cats)


def layer_qml(layer: str, counts: dict[str, int] | None = None) -> str:
    """The QML of one of the GeoPackage's layers (``reference``, ``submission``,
    ``instances``)."""
    return {"reference": reference_qml, "submission": submission_qml,
            "instances": instances_qml}[layer](counts)


def _sld_rule(value: str, attr: str, fill: str | None, stroke: str, width: float) -> str:
    fill_xml = (f'<se:Fill><se:SvgParameter name="fill">{fill}</se:SvgParameter>'
                '<se:SvgParameter name="fill-opacity">0.6</se:SvgParameter></se:Fill>'
                if fill else "")
    return (
        f"<se:Rule><se:Name>{value}</se:Name>"
        f"<ogc:Filter><ogc:PropertyIsEqualTo><ogc:PropertyName>{attr}</ogc:PropertyName>"
        f"<ogc:Literal>{value}</ogc:Literal></ogc:PropertyIsEqualTo></ogc:Filter>"
        f"<se:PolygonSymbolizer>{fill_xml}<se:Stroke>"
        f'<se:SvgParameter name="stroke">{stroke}</se:SvgParameter>'
        f'<se:SvgParameter name="stroke-width">{width:g}</se:SvgParameter>'
        "</se:Stroke></se:PolygonSymbolizer></se:Rule>"
    )


def layer_sld(layer: str) -> str:
    """The same categories as an OGC SLD 1.1 (for clients other than QGIS)."""
    if layer == "reference":
        attr = "status"
        rules = [_sld_rule(v, attr, hex_colour(STATUS_COLOURS[v]), hex_colour(STATUS_COLOURS[v]),
                           1) for v in ("matched", "missed")]
    elif layer == "submission":
        attr = "status"
        rules = [_sld_rule("matched", attr, None, hex_colour(SUBMISSION_MATCHED), 1.5),
                 _sld_rule("false_alarm", attr, None, hex_colour(STATUS_COLOURS["false_alarm"]),
                           2.5)]
    else:
        attr = "kind"
        rules = [_sld_rule(k, attr, hex_colour(KIND_COLOURS[k]), hex_colour(KIND_COLOURS[k]), 2)
                 for k in (ONE_TO_ONE, ONE_TO_MANY, MANY_TO_ONE)]
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<StyledLayerDescriptor xmlns="http://www.opengis.net/sld" '
        'xmlns:ogc="http://www.opengis.net/ogc" xmlns:se="http://www.opengis.net/se" '
        'version="1.1.0"><NamedLayer>'
        f"<se:Name>{layer}</se:Name><UserStyle><se:Name>{STYLE_NAMES[layer]}</se:Name>"
        f"<se:FeatureTypeStyle>{''.join(rules)}</se:FeatureTypeStyle>"
        "</UserStyle></NamedLayer></StyledLayerDescriptor>"
    )
