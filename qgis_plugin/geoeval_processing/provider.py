"""The Processing provider "geoeval": finds the ``geoeval`` command and offers its algorithms.

The command is the one set in *Settings ▸ Options ▸ Processing ▸ Providers ▸
geoeval ▸ geoeval command* (the console script, or the folder holding it, e.g. a
virtual environment's ``bin``/``Scripts``), else ``$GEOEVAL_COMMAND``, else
``geoeval`` on ``PATH``. It is checked with ``geoeval --version`` when the
provider loads and again whenever the setting changes.
"""

from __future__ import annotations

import os

from processing.core.ProcessingConfig import ProcessingConfig, Setting
from qgis.core import Qgis, QgsMessageLog, QgsProcessingProvider
from qgis.PyQt.QtGui import QIcon

from . import cli
from .algorithms import RankAlgorithm, ScoreAlgorithm

COMMAND_SETTING = "GEOEVAL_COMMAND"
ICON = os.path.join(os.path.dirname(__file__), "icon.svg")
NOT_FOUND = ("geoeval command not found: install geoeval in its own environment "
             "(python -m venv geoeval-env; geoeval-env/bin/pip install followed by a checkout "
             "of geoeval or a wheel built from one) and set "
             "Settings > Options > Processing > Providers > geoeval > geoeval command to its "
             "geoeval script (or put geoeval on PATH)")


class GeoevalProvider(QgsProcessingProvider):
    """Processing provider ``geoeval`` with ``geoeval:score`` and ``geoeval:rank``."""

    def __init__(self) -> None:
        super().__init__()
        self._checked: tuple[str | None, str | None, str] | None = None  # (path, version, why)

    def id(self) -> str:
        return "geoeval"

    def name(self) -> str:
        return "geoeval"

    def longName(self) -> str:
        version = self.versionInfo()
        return f"geoeval {version}" if version else "geoeval"

    def icon(self) -> QIcon:
        return QIcon(ICON)

    def svgIconPath(self) -> str:
        return ICON

    def versionInfo(self) -> str:
        self.command()
        return (self._checked or (None, None, ""))[1] or ""

    def load(self) -> bool:
        ProcessingConfig.settingIcons[self.name()] = self.icon()
        ProcessingConfig.addSetting(Setting(
            self.name(), COMMAND_SETTING,
            self.tr("geoeval command (the geoeval script or its folder; empty: PATH)"), "",
            valuetype=Setting.FILE))
        ProcessingConfig.readSettings()
        if self.command() is None:
            QgsMessageLog.logMessage(self.problem(), "geoeval", Qgis.Warning)
        self.refreshAlgorithms()
        return True

    def unload(self) -> None:
        if COMMAND_SETTING in ProcessingConfig.settings:
            ProcessingConfig.removeSetting(COMMAND_SETTING)

    def loadAlgorithms(self) -> None:
        self.addAlgorithm(ScoreAlgorithm())
        self.addAlgorithm(RankAlgorithm())

    def command(self) -> str | None:
        """The checked ``geoeval`` command, or None (then :meth:`problem` says why)."""
        path = cli.find_command(ProcessingConfig.getSetting(COMMAND_SETTING) or None)
        if self._checked is None or self._checked[0] != path:
            if path is None:
                self._checked = (None, None, NOT_FOUND)
            else:
                try:
                    self._checked = (path, cli.version(path), "")
                except cli.GeoevalError as exc:
                    self._checked = (path, None, str(exc))
        return self._checked[0] if self._checked[1] else None

    def problem(self) -> str:
        """Why :meth:`command` found no working geoeval ('' when it did)."""
        self.command()
        return self._checked[2] if self._checked else NOT_FOUND
