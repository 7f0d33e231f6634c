"""What every family's results page and downloads share: progress over time, cost, approve/reject suggestions."""
from __future__ import annotations

from collections.abc import Mapping

from .. import charts
from ..families.base import Table
from ..models import CampaignResults
from ..parts import offered
from ..services.crowd import approval_suggestions, cost_report

COST_LABELS = [
    ("currency_per_hit", "Payment per HIT"), ("hits_paid", "HITs paid (completed assignments)"),
    ("total", "Total paid"), ("systems", "Systems evaluated"), ("per_system", "Cost per system"),
    ("hits_by_unreliable_workers", "HITs done by unreliable workers"),
    ("spent_on_unreliable", "Spent on unreliable workers"), ("share_on_unreliable", "Share spent on unreliable"),
]
APPROVAL_COLUMNS = ["worker", "hits", "judgments", "pairs", "p_value", "reliable", "suggestion", "reason"]


def progress_section(progress: dict) -> dict:
    """The two cumulative charts (judgments, completed HITs) and their data table."""
    times, bucket = progress.get("times", []), progress.get("bucket", "hour")
    return {
        "bucket": bucket,
        "judgments_svg": charts.line_chart(times, progress.get("judgments", []), title="Judgments over time",
                                           y_label="Judgments (cumulative)", bucket=bucket),
        "hits_svg": charts.line_chart(times, progress.get("hits_done", []), title="Completed HITs over time",
                                      y_label="Completed HITs (cumulative)", colour=charts.GREEN, bucket=bucket),
        "rows": list(zip(times, progress.get("judgments", []), progress.get("hits_done", []), strict=False)),
    }


def cost_rows(cost: dict) -> list[tuple[str, str, str]]:
    rows = []
    for key, label in COST_LABELS:
        value = cost.get(key)
        if key == "share_on_unreliable" and value is not None:
            text = f"{value:.1%}"
        else:
            text = "–" if value is None else str(value)
        rows.append((key, label, text))
    return rows


def _progress_table(campaign, params: Mapping[str, str]):
    header = CampaignResults.objects.filter(campaign=campaign).only("progress").first()
    progress = header.progress if header else {}
    rows = [{"time": t, "judgments": j, "hits_done": d} for t, j, d in
            zip(progress.get("times", []), progress.get("judgments", []), progress.get("hits_done", []), strict=False)]
    return ["time", "judgments", "hits_done"], rows


def _cost_table(campaign, params: Mapping[str, str]):
    cost = cost_report(campaign)
    return ["item", "value"], [{"item": key, "value": cost.get(key)} for key, _ in COST_LABELS]


def _approvals_table(campaign, params: Mapping[str, str]):
    return APPROVAL_COLUMNS, approval_suggestions(campaign)


#: Tables every campaign offers, after its family's own.
SHARED_TABLES = [Table("progress", _progress_table), Table("cost", _cost_table),
                 Table("approvals", _approvals_table)]


def tables_of(family, parts: list | None = None, campaign=None) -> dict[str, Table]:
    """Every downloadable table of a campaign of `family`, by name, in the page's order: the family's, then those of
    the result parts it offers (only `parts`, when given: those that apply to the campaign), then the shared ones.
    With `campaign`, only the tables that apply to it (`Table.applies`): what its page and `tables/` offer."""
    tables = {t.name: t for t in family.tables()}
    for part in offered(family) if parts is None else parts:
        for table in part.tables():
            tables.setdefault(table.name, table)
    for table in SHARED_TABLES:
        tables.setdefault(table.name, table)
    if campaign is None:
        return tables
    return {name: table for name, table in tables.items() if table.applies_to(campaign)}
