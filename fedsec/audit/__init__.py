"""Declarative audits: a TOML scenario, a grid of runs, attacks on every run, one report.

See :mod:`fedsec.audit.spec` for the scenario format, :mod:`fedsec.audit.engine`
for running it (in parallel, resumable; :mod:`fedsec.audit.dask_executor` on a Dask
cluster) and :mod:`fedsec.report` for the report.
"""

from fedsec.audit.engine import run_audit
from fedsec.audit.spec import AuditSpec, AuditSpecError, Cell, load_spec

__all__ = ["AuditSpec", "AuditSpecError", "Cell", "load_spec", "run_audit"]
