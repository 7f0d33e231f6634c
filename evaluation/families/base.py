"""What every result family provides, with defaults that read the shared tables.

A family that needs no table of its own stores its workers in `WorkerResult` and any other
table as JSON rows in `ResultTable` (`replace_results(..., tables={"systems": rows})`); the
defaults below then answer `systems/` and `workers/`, offer the CSVs and fill the admin.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from annotation.protocols import UnknownProtocol

from ..models import CampaignResults, WorkerResult
from ..presets import Preset
from ..serializers import WorkerResultSerializer
from ..services import media_played
from ..services.results_read import freshness, stored_rows, stored_table


class BadQuery(ValueError):
    """A query parameter the family cannot answer; the API answers 400 with the message."""


class NotEnoughData(Exception):
    """A family's analysis has too little data to store results (a pilot): a state, not a failure. The message says
    what is missing, for the researcher ("3 more translations per system for a ranking")."""


#: What a family's analysis raises when the data are too few (a pilot): caught in one place,
#: `evaluation.analyses.compute_results`, and stored as the "not enough data" state with its reason.
TOO_LITTLE_DATA = (NotEnoughData, BadQuery)


@dataclass(frozen=True)
class Table:
    """A result table offered for download from the page and the API.

    `rows(campaign, params)` returns (columns, rows); `latex(campaign, params)`, where set,
    returns the table as a booktabs LaTeX tabular ready for a paper. `applies(campaign)`, where set, says whether
    the table can hold rows for that campaign at all, from its settings (a review stage, a side-by-side protocol,
    ESA^AI's rate), never from its data: the results page and `tables/` offer it only where it does, as
    `evaluation.parts` offers a result part (its URL still answers the header alone, for scripts).
    """

    name: str
    rows: Callable[[object, Mapping[str, str]], tuple[list[str], list[dict]]]
    latex: Callable[[object, Mapping[str, str]], str] | None = None
    applies: Callable[[object], bool] | None = None

    def applies_to(self, campaign) -> bool:
        return self.applies is None or bool(self.applies(campaign))


@dataclass(frozen=True)
class GateVerdict:
    """Why the live reliability gate stops a worker (docs/methods.md §12.1): `rule` is "test" or "missed", `reason`
    a sentence for the researcher, with the figures it rests on."""

    rule: str
    reason: str
    test: str = ""
    p_value: float | None = None
    pairs: int = 0
    missed_share: float | None = None


def scope_campaigns(campaign, scope: str) -> list:
    """The campaigns a worker's reliability is judged over: the campaign itself, or with scope "study" every campaign
    of its study in the same family (`reliability_scope`, docs/methods.md §4; the live gate, §12.1). Only the
    study's members are pooled (`Study.members`: its owner's campaigns and those of researchers it is shared
    with), never another owner's campaign by worker id; a campaign that is not a member is judged alone."""
    if scope != "study" or campaign.study_id is None:
        return [campaign]
    members = list(campaign.study.members().order_by("pk"))
    if all(c.pk != campaign.pk for c in members):
        return [campaign]
    family = _family_name(campaign)
    return [c for c in members if _family_name(c) == family]


def _family_name(campaign) -> str | None:
    """The family the campaign's protocol names; None when the protocol is no longer registered."""
    try:
        return campaign.protocol_spec.family
    except UnknownProtocol:
        return None


@dataclass(frozen=True)
class Offers:
    """What a family offers beyond its tables and endpoints, declared on the family (never probed by name)."""

    #: The power-and-cost page (views/power.py, over the family's `power` endpoint; docs/methods.md §12.3).
    power: bool = False
    #: Test-set calibration: the compare page builds on the family's `compare_context` (docs/methods.md §5).
    calibration: bool = False
    #: Spearman's rho against a reference ranking the researcher enters in the admin (docs/methods.md §8).
    reference_ranking: bool = False
    #: The shared result parts the family offers (`evaluation.parts`), each shown where it applies to a campaign
    #: (instruction following: campaigns with the option instruction_judgment; media split: campaigns with media;
    #: training: campaigns with tutorial items that carry an expected answer;
    #: bradley_terry: every campaign of a family that declares its `battles`).
    parts: tuple[str, ...] = ("instruction-following", "media-split", "training")


class Family:
    """Base class: the empty family (no analysis, no tables). Subclasses override what they offer."""

    name: str = ""
    label: str = ""
    #: The results page's section for this family (a partial template).
    template: str = ""
    #: The page's table of contents for that section: (anchor, title).
    sections: tuple[tuple[str, str], ...] = ()
    #: Family-specific API endpoints `/api/campaigns/<slug>/<name>/`, each a method `name(campaign, params)`.
    endpoints: tuple[str, ...] = ()
    #: The workers' columns in the API (`workers/`) and the admin.
    worker_serializer = WorkerResultSerializer
    #: The workers' columns on the page and in workers.csv (`worker_rows` fills them).
    worker_table_serializer = WorkerResultSerializer
    #: What the family offers beyond its tables and endpoints (pages, admin forms).
    offers: Offers = Offers()
    #: The family's statistics presets (`evaluation.presets`); the one marked `default=True` is its default.
    presets: tuple[Preset, ...] = ()

    # Analysis ---------------------------------------------------------------------------------

    def compute(self, campaign) -> CampaignResults | None:
        """Load the campaign's judgments, run the statistics and store the results; None if there is nothing."""
        return None

    def compute_study(self, campaigns: list) -> dict[int, CampaignResults | None]:
        """Compute the campaigns of one study that belong to this family; by default each on its own."""
        return {campaign.pk: self.compute(campaign) for campaign in campaigns}

    def battles(self, campaign, last_id: int):
        """The judgments up to `last_id` as battles between two systems (`common.battles.Battles`), for the
        Bradley–Terry part (docs/methods.md §8.8), where the family's data compare systems two at a time and it
        offers that part (`Offers.parts`); the default: None, no battles."""
        return None

    def missing(self, campaign, header: CampaignResults) -> list[dict]:
        """What the stored results still lack (a pilot), each `{"what", "text"}`; empty when they are complete.
        The default reads the systems the family answers `systems/` with: none scored, or some scored but not
        ranked, and no worker reliable yet where the family tests workers. Families say more where they know."""
        if "systems" not in {t.name for t in self.tables()}:
            return []
        rows = self.systems(campaign, {})["results"]
        summary = header.summary or {}
        out = []
        if summary.get("workers") and summary.get("reliable_workers") == 0:
            out.append({"what": "reliable_workers", "text": f"none of the {summary['workers']} workers has passed "
                        "the reliability test yet, and the ranking counts reliable workers only"})
        if not rows:
            out.append({"what": "systems", "text": "no system has enough judgments to be scored yet"})
        elif all(r.get("rank") is None for r in rows):
            out.append({"what": "ranking", "text": "no system has enough judgments to be ranked yet"})
        return out

    # API --------------------------------------------------------------------------------------

    def systems(self, campaign, params: Mapping[str, str]) -> dict:
        """The body of `systems/`: per system at least system, score, score_name, n, rank, rank_range, cluster."""
        return {**freshness(campaign).as_api(), "results": stored_rows(campaign, "systems")}

    def workers(self, campaign, params: Mapping[str, str]) -> dict:
        """The body of `workers/`."""
        rows = WorkerResult.objects.filter(campaign=campaign).order_by("worker")
        results, _ = media_played.with_media_columns(campaign, list(self.worker_serializer(rows, many=True).data))
        return {**freshness(campaign).as_api(), "results": results}

    def agreement(self, campaign, params: Mapping[str, str]) -> dict:
        """The stored agreement tables and the campaign-level summary (an endpoint where `endpoints` lists it)."""
        header = CampaignResults.objects.filter(campaign=campaign).only("agreement", "summary").first()
        return {**freshness(campaign).as_api(), "agreement": header.agreement if header else {},
                "summary": header.summary if header else {}}

    def endpoint(self, name: str) -> Callable[[object, Mapping[str, str]], dict] | None:
        return getattr(self, name) if name in self.endpoints else None

    # Page -------------------------------------------------------------------------------------

    def worker_rows(self, campaign) -> list[dict]:
        """One row per worker, as the page and the workers CSV show them."""
        rows = WorkerResult.objects.filter(campaign=campaign).order_by("worker", "annotator_id")
        return list(self.worker_serializer(rows, many=True).data)

    def page_context(self, campaign, header: CampaignResults | None, workers: list[dict], request) -> dict:
        """What the family's section template needs; `workers` are the rows the page's filter keeps."""
        return {}

    def tables(self) -> list[Table]:
        """The family's downloadable tables (the page adds progress, cost and approvals to every family)."""
        return [Table("workers", self.workers_table), Table("systems", self.stored_table("systems"))]

    def workers_table(self, campaign, params: Mapping[str, str]) -> tuple[list[str], list[dict]]:
        rows, media = media_played.with_media_columns(campaign, self.worker_rows(campaign))
        which = params.get("workers", "all")
        if which in ("reliable", "unreliable"):
            rows = [r for r in rows if r["reliable"] == (which == "reliable")]
        return list(self.worker_table_serializer.Meta.fields) + list(media_played.COLUMNS if media else ()), rows

    @staticmethod
    def stored_table(name: str, columns: tuple[str, ...] = ()) -> Callable[[object, Mapping[str, str]],
                                                                            tuple[list[str], list[dict]]]:
        """A table stored in `ResultTable` (`replace_results(..., tables=...)`), as a download. A table stored with
        no rows (or not stored: too little data) has no columns of its own; `columns` then give the CSV its header,
        so that an empty download still says what it would hold."""
        def read(campaign, params):
            from annotation.services.stages import first_stage

            # A multi-stage task's results are stored on its first stage: any stage's download is the task's.
            stored_columns, rows = stored_table(first_stage(campaign), name)
            return (stored_columns or list(columns)), rows
        return read

    def spam_miss_rates(self, campaign) -> dict[int, float]:
        """Per annotator id, the share of spam items missed, where the family has spam items."""
        return {}

    # Live reliability gate ----------------------------------------------------------------------

    def gate(self, campaign, annotator) -> GateVerdict | None:
        """Whether the worker fails the campaign's live reliability gate after a finished HIT (the campaign's
        `gate` option is on; the caller checks): a verdict to stop them, or None to let them go on. Loads only
        that worker's judgments. The default: the family has no gate."""
        return None

    # Steering campaigns (docs/methods.md §12) ---------------------------------------------------

    #: The worker filters ranking stability runs on (the first is the default); empty: the family has none.
    stability_filters: tuple[str, ...] = ()
    #: The scores ranking stability runs on (z-scores or raw); a family with one score offers only the default.
    stability_scores: tuple[str, ...] = ("z", "raw")

    def stability_data(self, campaign, workers: str, score: str, last_judgment_id: int):
        """The judgments the family's ranking counts under a worker filter and score, up to the judgment id the
        stored results cover, as `evaluation.stats.stability.StabilityData` for the bootstrap over workers and
        segments (evaluation/stability_tasks.py); the default: the family has no ranking stability."""
        return None

    def adaptive(self):
        """The family's adaptive-allocation adapter (which adjacent systems are still open, what a batch favours),
        or None: the family cannot run adaptively."""
        return None

    # Admin ------------------------------------------------------------------------------------

    def admin_inlines(self) -> list:
        """Admin inline classes showing this family's stored results on the campaign's results page."""
        from ..admin_inlines import ResultTableInline

        return [ResultTableInline]

    def admin_summary(self, summary: dict) -> str:
        """One short line for the admin's list of results (e.g. reliable workers of all)."""
        if "reliable_workers" in summary:
            return f"{summary['reliable_workers']} / {summary['workers']}"
        return "–"


class NoFamily(Family):
    """What a campaign whose protocol has no registered family gets: no analysis, empty answers."""

    label = "no statistics"

    def tables(self) -> list[Table]:
        return [Table("workers", self.workers_table)]
