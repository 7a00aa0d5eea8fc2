"""The report layer: the per-(program, GPU) report model, its insights, per-op measured headroom
and terminal rendering. Data flows in from the analysis; nothing here imports an entry point."""

from solar.report.model import (
    GROUP_KEYS,
    TOP,
    BoundReport,
    ForcedReport,
    GroupRow,
    KernelReport,
    OpReport,
    ProvenanceReport,
    Report,
    ServingReport,
    TotalsReport,
    TrafficReport,
    build_report,
    group_ops,
    reports_to_json,
    top_ops,
    traffic_report,
    with_insights,
)

__all__ = [
    "GROUP_KEYS",
    "TOP",
    "BoundReport",
    "ForcedReport",
    "GroupRow",
    "KernelReport",
    "OpReport",
    "ProvenanceReport",
    "Report",
    "ServingReport",
    "TotalsReport",
    "TrafficReport",
    "build_report",
    "group_ops",
    "reports_to_json",
    "top_ops",
    "traffic_report",
    "with_insights",
]
