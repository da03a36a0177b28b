"""The contest report: one self-contained HTML page (``docs/html-report.md``).

:func:`entry_report` keeps what the page shows of one scored submission;
:func:`render_page` fills the Jinja2 templates (``templates/``) with the entries
and, for a contest, the ranking; :func:`write_html` writes the page atomically.
"""

from geoeval.report.html.page import (
    EntryReport,
    entry_report,
    incomparable_pairs,
    leaderboard,
    render_page,
    write_html,
)

__all__ = ["EntryReport", "entry_report", "incomparable_pairs", "leaderboard", "render_page",
           "write_html"]
