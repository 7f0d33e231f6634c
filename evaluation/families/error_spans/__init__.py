"""Error-span results (docs/methods.md §11): ESA and MQM system scores with significance presets (WMT24: per
domain paired Wilcoxon combined with Stouffer's method; WMT25: one-sided Wilcoxon between neighbours; paired
approximate randomization as an option), clusters and rank ranges, errors by category and severity, span
agreement and Krippendorff's alpha, the workers' perturbation test and a document view of every judge's spans."""
from __future__ import annotations

from ...services.latex import systems_booktabs
from ...services.results_read import freshness, stored_rows
from ..base import BadQuery, Family, Table
from ..common.stability import answer as stability_answer
from ..common.stability import table_rows as stability_table
from . import applies, presenter
from .presets import PRESETS
from .review import TABLES as REVIEW_TABLES
from .storage import compute_error_spans
from .sxs import CONSISTENCY, WIN_RATES


class ErrorSpansFamily(Family):
    name = "error-spans"
    label = "Error spans (ESA, MQM)"
    presets = PRESETS
    template = "evaluation/families/error_spans.html"
    sections = (("systems", "System scores"), ("errors", "Errors by category"), ("domains", "Per domain"),
                ("stability", "Ranking stability"), ("workers", "Workers"), ("agreement", "Agreement"),
                ("document", "One document"))
    endpoints = ("significance", "breakdown", "domains", "agreement", "perturbation", "document", "stability",
                 "segments", "review", "ai_assist", "win_rates", "consistency")

    def compute(self, campaign):
        return compute_error_spans(campaign)

    def systems(self, campaign, params):
        """The task's system scores, from any stage (a review stage's slug answers with its first stage's)."""
        from annotation.services.stages import first_stage

        return super().systems(first_stage(campaign), params)

    def significance(self, campaign, params):
        """p[system, opponent]: the preset's test that system is better (WMT24/25: one-sided; randomization:
        two-sided), with the shared items."""
        return {**freshness(campaign).as_api(), "results": stored_rows(campaign, "significance")}

    def ai_assist(self, campaign, params):
        """ESA^AI (docs/methods.md#esa-ai): the rate, budget saved and Kendall's τ against the naive ranking (rows
        `measure`, `value`; none when the rule is off); per-system figures are in `systems/`."""
        return {**freshness(campaign).as_api(), "results": stored_rows(campaign, "ai_assist")}

    def breakdown(self, campaign, params):
        return {**freshness(campaign).as_api(), "results": stored_rows(campaign, "breakdown")}

    def segments(self, campaign, params):
        """Per (system, segment): the item score the system table is built from (MQM: minus the weighted errors,
        averaged over the segment's judges)."""
        return {**freshness(campaign).as_api(), "results": stored_rows(campaign, "segments")}

    def review(self, campaign, params):
        """The review stage's results (review.py), from any stage of the task: `table=systems|changes|raters|
        significance` gives one table, none all four."""
        from annotation.services.stages import first_stage

        root = first_stage(campaign)
        which = params.get("table")
        if which and f"review_{which}" not in REVIEW_TABLES:
            raise BadQuery("table must be systems, changes, raters or significance")
        names = [f"review_{which}"] if which else list(REVIEW_TABLES)
        return {**freshness(root).as_api(), **{name.removeprefix("review_"): stored_rows(root, name)
                                                for name in names}}
    def win_rates(self, campaign, params):
        """Side by side (MQM-SxS, contrastive ESA): per ordered pair of systems, the screens where one's item score
        was better, equal or worse than the other's (same judge, same item)."""
        return {**freshness(campaign).as_api(), "results": stored_rows(campaign, "win_rates")}

    def consistency(self, campaign, params):
        """Side by side: the share of identical words marked alike across columns, with and without the hint."""
        return {**freshness(campaign).as_api(), "results": stored_rows(campaign, "consistency")}

    def domains(self, campaign, params):
        return {**freshness(campaign).as_api(), "results": stored_rows(campaign, "domains")}

    def agreement(self, campaign, params):
        return {**freshness(campaign).as_api(), "results": stored_rows(campaign, "agreement")}

    def perturbation(self, campaign, params):
        return {**freshness(campaign).as_api(), "results": stored_rows(campaign, "perturbation")}

    def document(self, campaign, params):
        """`document/?document=<doc_id>&system=<name>`: every judge's spans and score on one document."""
        doc_id, system = params.get("document"), params.get("system")
        if not doc_id or not system:
            raise BadQuery("give document=<doc_id> and system=<system name>")
        return presenter.document_view(campaign, doc_id, system)

    def gate(self, campaign, annotator):
        """The live reliability gate on the worker's perturbed copies (gate.py, docs/methods.md §12.1)."""
        from .gate import gate

        return gate(campaign, annotator)

    stability_filters = ("all", "reliable")
    #: One score (ESA, or minus MQM), under the name of the shared default variant (common/stability.py).
    stability_scores = ("z",)

    def stability_data(self, campaign, workers, score, last_judgment_id):
        """The observations the ranking counts, for the bootstrap over workers and segments (stability.py)."""
        from .stability import stability_data

        return stability_data(campaign, workers, score, last_judgment_id)

    def stability(self, campaign, params):
        """Ranking stability by bootstrap over workers and segments (common/stability.py, docs/methods.md §12.4)."""
        return stability_answer(campaign, self, params)

    def missing(self, campaign, header):
        """Beyond the default: how many more counted items each unranked system needs under the preset (WMT24
        ranks a system from 100 items), e.g. "sys-A: 97 more counted items to be ranked"."""
        out = super().missing(campaign, header)
        need = max(int(((header.summary or {}).get("rules") or {}).get("min_items") or 0), 1)
        short = [r for r in stored_rows(campaign, "systems") if r.get("rank") is None and (r.get("n") or 0) < need]
        if short:
            out = [m for m in out if m["what"] != "ranking"]
            out.append({"what": "items", "needed": need, "text": "; ".join(
                f"{r['system']}: {need - (r.get('n') or 0)} more counted items to be ranked (the preset ranks a "
                f"system from {need})" for r in short)})
        return out

    def page_context(self, campaign, header, workers, request):
        return presenter.page_context(campaign, header, workers, request)

    def tables(self):
        stored = self.stored_table
        return [Table("workers", self.workers_table), Table("systems", stored("systems", SYSTEMS), systems_latex),
                Table("significance", stored("significance", SIGNIFICANCE)),
                Table("breakdown", stored("breakdown", BREAKDOWN)), Table("domains", stored("domains", DOMAINS)),
                Table("perturbation", stored("perturbation", PERTURBATION)),
                Table("segments", stored("segments", SEGMENTS)),
                Table("agreement", stored("agreement", AGREEMENT)),
                Table("ai_assist", stored("ai_assist", AI_ASSIST), applies=applies.ai_assist),
                Table("stability", stability_table),
                *(Table(name, stored(name, columns), applies=applies.review)
                  for name, columns in REVIEW_TABLES.items()),
                Table("win_rates", stored("win_rates", WIN_RATES), applies=applies.side_by_side),
                Table("consistency", stored("consistency", CONSISTENCY), applies=applies.side_by_side)]


#: The headers of the stored tables (storage.py), for their downloads when a pilot has no rows yet.
SYSTEMS = ("system", "score", "score_name", "n", "observations", "rank", "rank_range", "cluster", "mean_score",
           "ranked", "table_rule")
SIGNIFICANCE = ("system", "opponent", "p_value", "shared_items", "method")
BREAKDOWN = ("system", "category", "severity", "errors", "per_judgment")
DOMAINS = ("system", "domain", "score", "score_name")
SEGMENTS = ("system", "doc_id", "seg_id", "score", "score_name")
PERTURBATION = ("worker", "pairs", "p_value", "reliable", "major_on_perturbed")
AGREEMENT = ("measure", "value", "n")
AI_ASSIST = ("measure", "value")


def systems_latex(campaign, params) -> str:
    """The ESA or MQM ranking as a booktabs table, clusters split by rules, as DA's and pairwise's are; under
    WMT25 (rows with `table_rule`) a `\\cmidrule` where WMT25's table draws one instead."""
    rows = stored_rows(campaign, "systems")
    kind = (rows[0]["score_name"] if rows else "") or "score"
    table_rules = any(r.get("table_rule") is not None for r in rows)
    return systems_booktabs(rows, kind.upper(), f"{campaign.name}: {kind.upper()} scores",
                            rule_after="table_rule" if table_rules else None)


#: The family object `settings.MTEVAL_RESULT_FAMILIES` names.
FAMILY = ErrorSpansFamily()
