"""geoeval for QGIS: a Processing provider that runs geoeval in its own environment.

See docs/qgis.md of the geoeval repository.
"""


def classFactory(iface):  # noqa: N802 - the name QGIS calls
    from .plugin import GeoevalPlugin

    return GeoevalPlugin(iface)
