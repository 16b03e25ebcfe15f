"""The audit report: logged decisions read from a table, audited for fairness, compared
with a fair alternative, and written as a self-contained HTML page and a JSON file.

``fairdecide audit DATA.csv --group COL --action COL --outcome COL`` on the command
line, :func:`audit_report` in Python.
"""

from fairdecide.report.build import audit_report
from fairdecide.report.inputs import prepare_data, read_table
from fairdecide.report.report import AuditReport
from fairdecide.report.utility import parse_utility

__all__ = ["AuditReport", "audit_report", "parse_utility", "prepare_data", "read_table"]
