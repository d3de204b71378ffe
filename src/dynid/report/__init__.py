"""The HTML report: one self-contained file (inline CSS, PNG figures as base64 data URIs, no
scripts, no network) of an identification study.

Modules, one job each:
    inputs    which files feed the report (a demo directory and/or explicit paths) and loading them
    html      page assembly: escaping, tables, notes, figures, the stylesheet
    figures   matplotlib figures (Agg) rendered to PNG data URIs
    sections  one function per section; a section whose input is missing becomes a visible note
    builder   the whole page from the inputs; atomic write
"""

from dynid.report.builder import build_report, write_report
from dynid.report.inputs import DEMO_FILES, ReportInputs

__all__ = ["DEMO_FILES", "ReportInputs", "build_report", "write_report"]
