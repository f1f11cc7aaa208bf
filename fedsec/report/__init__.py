"""Audit reports: one self-contained HTML page, Markdown and JSON, rebuilt from cell results.

:func:`build_report` reads ``DIR/cells/*.json`` (written by the audit engine)
and writes ``DIR/report.html`` (plots embedded), ``DIR/report.md`` with
``DIR/plots/*.png`` and ``DIR/results.json`` (versioned schema).
"""

from fedsec.report.build import REPORT_SCHEMA_VERSION, build_report

__all__ = ["REPORT_SCHEMA_VERSION", "build_report"]
