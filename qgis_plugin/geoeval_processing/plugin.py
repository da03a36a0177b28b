"""The QGIS plugin: registers the geoeval Processing provider (nothing else)."""

from __future__ import annotations

from qgis.core import QgsApplication

from .provider import GeoevalProvider


class GeoevalPlugin:
    """Adds the provider when QGIS (or ``qgis_process``) starts the plugin."""

    def __init__(self, iface=None) -> None:
        self.iface = iface
        self.provider: GeoevalProvider | None = None

    def initProcessing(self) -> None:
        if self.provider is None:
            self.provider = GeoevalProvider()
            QgsApplication.processingRegistry().addProvider(self.provider)

    def initGui(self) -> None:
        self.initProcessing()

    def unload(self) -> None:
        if self.provider is not None:
            QgsApplication.processingRegistry().removeProvider(self.provider)
            self.provider = None
