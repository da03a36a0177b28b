"""The metric audit protocol of Hemery et al. (2010) §3 (``geoeval audit``).

:func:`audit` alters 16 synthetic ground truths (translation, scale, rotation,
perspective), scores every localisation metric on the altered results and
checks Hemery et al.'s properties; :mod:`geoeval.audit.tables` renders Tables 3–8 and
:mod:`geoeval.report.audit_figures` draws the curves.
"""

from __future__ import annotations

from geoeval.audit.protocol import AuditResult, Curve, audit

__all__ = ["AuditResult", "Curve", "audit"]
