"""The metric audit protocol of Hemery et al. (2010) §3 (``geoeval audit``).

:func:`audit` alters 16 synthetic ground truths (translation, scale, rotation,
perspective), scores every localisation metric on the altered results and
checks Hemery et al.'s properties; :mod:`geoeval.audit.tables` renders Tables 3–8 and
:mod:`geoeval.report.audit_figures` draws the curves.
"""

from __future__ import annotations

import sys
import types

from geoeval.audit.protocol import AuditResult, Curve, audit

__all__ = ["AuditResult", "Curve", "audit"]


class _CallableModule(types.ModuleType):
    """``geoeval.audit`` is both this package and its function: importing the package
    (``import geoeval.audit.shapes``) binds ``geoeval.audit`` to the module, which then
    still runs :func:`audit` when called."""

    def __call__(self, *args, **kwargs):  # noqa: D102
        return audit(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
