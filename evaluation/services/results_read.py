"""Reading stored results, for the API and the pages alike: freshness, stored tables, z-scores."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import F

from annotation.models import Campaign
from annotation.services.stages import task_judgments

from ..models import CampaignResults, ResultTable, WorkerResult


@dataclass(frozen=True)
class Freshness:
    """When the results were computed, over how many judgments (every judgment stored up to the computation, of every
    stage of a multi-stage task: what the progress chart counts), and how many arrived since (one count query)."""

    computed_at: datetime | None
    judgments_covered: int
    new: int
    seconds: float | None = None
    runs: int = 0
    #: {"status": "ready" | "not_enough_data", "missing": [{"what", "text"}]} (evaluation/analyses.py); None before
    #: the first run.
    state: dict | None = None

    @property
    def not_enough_data(self) -> bool:
        return bool(self.state) and self.state.get("status") == "not_enough_data"

    @property
    def computed(self) -> bool:
        return self.computed_at is not None

    @property
    def new_text(self) -> str:
        return f"{self.new:,}"

    @property
    def judgments_text(self) -> str:
        return f"{self.judgments_covered:,}"

    def as_api(self) -> dict:
        return {"computed_at": self.computed_at, "judgments_covered": self.judgments_covered,
                "new_judgments": self.new > 0, "stale": self.new > 0, "data_state": self.state}


def freshness(campaign: Campaign, header: CampaignResults | None = None) -> Freshness:
    """The campaign's freshness; pass the header when it is already loaded, to save a query."""
    if header is None:
        header = CampaignResults.objects.filter(campaign=campaign).only(
            "computed_at", "judgments", "last_judgment_id", "seconds", "runs").annotate(
            data_state=F("summary__data_state")).first()
    last = header.last_judgment_id if header else 0
    new = task_judgments(campaign).filter(id__gt=last).count()  # every stage's, for a multi-stage task
    if header is None:
        return Freshness(None, 0, new)
    if hasattr(header, "data_state"):
        state = header.data_state
    elif "summary" in header.get_deferred_fields():
        state = CampaignResults.objects.filter(pk=header.pk).values_list("summary__data_state", flat=True).first()
    else:
        state = (header.summary or {}).get("data_state")
    return Freshness(header.computed_at, header.judgments, new, header.seconds, header.runs, state)


def header_of(campaign: Campaign) -> CampaignResults | None:
    """The campaign's stored results header, if it has one (through `select_related("results")` when loaded so)."""
    try:
        return campaign.results
    except CampaignResults.DoesNotExist:
        return None


def stored_reader(name: str, columns: tuple[str, ...]):
    """A download's `rows(campaign, params)` for the stored table `name`: its stored columns and rows, or `columns`
    and no rows before it is stored (families/base.Table)."""
    def read(campaign, params):
        stored_columns, rows = stored_table(campaign, name)
        return stored_columns or list(columns), rows
    return read


def stored_table(campaign: Campaign, name: str, variant: str = "") -> tuple[list[str], list[dict]]:
    """The columns and rows of a table stored in `ResultTable`, each row's keys in column order."""
    table = ResultTable.objects.filter(campaign=campaign, name=name, variant=variant).only("columns", "rows").first()
    if table is None:
        return [], []
    return table.columns, [{c: row.get(c) for c in table.columns} for row in table.rows]


def stored_rows(campaign: Campaign, name: str, variant: str = "") -> list[dict]:
    """The rows of a table stored in `ResultTable`, keys in column order; empty when there is none."""
    return stored_table(campaign, name, variant)[1]


def z_lookup(campaign: Campaign) -> dict[int, tuple[float, float]]:
    """Per annotator id, the (mean, sd) that standardise their scores (docs/methods.md §5); constant workers out."""
    rows = WorkerResult.objects.filter(campaign=campaign, constant=False, sd_raw__isnull=False).values_list(
        "annotator_id", "mean_raw", "sd_raw")
    return {annotator: (mean, sd) for annotator, mean, sd in rows}
