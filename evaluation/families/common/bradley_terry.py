"""The Bradley–Terry result part (docs/methods.md §8.8): a leaderboard as LLM-evaluation arenas publish it, for
every campaign of a family that declares its battles (`Family.battles`: pairwise, imported arena battles, ranking).

The fit on all the battles is stored first (score on the Elo-like scale, battles, win rate, the win-rate matrix);
the bootstrap's resamples then run on Celery subtasks (`common/bootstrap_shares.py`, as TrueSkill's do) and the
last one in replaces the rows with the same analysis plus the runs' percentile intervals and rank ranges. Too few
battles (fewer than two systems, or strengths that are not finite) is the part's "not enough data" state, stored
with its reason, never a failed run. Settings: `BRADLEY_TERRY_TIES` (davidson), `BRADLEY_TERRY_RUNS` (1,000)
and `BRADLEY_TERRY_RUNS_PER_TASK`; a campaign's options `bradley_terry_ties` and `bradley_terry_runs` override."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from celery import shared_task
from django.conf import settings
from django.db import transaction

from annotation.models import Campaign

from ...models import CampaignResults, ResultTable
from ...services.latex import booktabs
from ...services.results_read import freshness, stored_table
from ...services.storing import finite, jsonable
from ...stats import bradley_terry as bt
from ..base import Table
from .battles import Battles
from .bootstrap_shares import current, gather_share, run_chunks
from .ranked import CONFIDENCE, MAX_BOOTSTRAP_RUNS

TABLE, MATRIX, FIT, RUNS_TABLE = "bradley_terry", "bradley_terry_matrix", "bradley_terry_fit", "bradley_terry_runs"
COLUMNS = ("system", "score", "low", "high", "rank", "rank_range", "rank_ci", "battles", "wins", "losses", "ties",
           "win_rate", "beta")
MATRIX_COLUMNS = ("system", "opponent", "battles", "win_rate", "predicted")
TIE_LABELS = {"davidson": "Davidson (1970)", "rao-kupper": "Rao & Kupper (1967)"}
CONVENTION = ("maximum likelihood over all battles; score = 400/ln 10 · β + 1000 (the mean system scores 1000; 400 "
              "points are odds of 10 to 1); 95 % percentile intervals over multinomial bootstrap resamples of the "
              "battles; rank range: the 2.5th–97.5th percentile of each run's rank (WMT14), rank_ci: 1 + the systems "
              "whose interval lies wholly above (LMSYS); win rate counts a tie as half a win; a tie with both bad is "
              "a tie")
#: The page shows the win-rate matrix up to this many systems (the CSV always has every pair).
MATRIX_ON_PAGE = 20


def tie_model(campaign: Campaign) -> str:
    """The campaign's tie model (option `bradley_terry_ties`, else the setting): davidson or rao-kupper."""
    chosen = (campaign.options or {}).get("bradley_terry_ties") or settings.BRADLEY_TERRY_TIES
    return chosen if chosen in bt.TIE_MODELS else bt.TIE_MODELS[0]


def runs_wanted(campaign: Campaign) -> int:
    """The bootstrap resamples (option `bradley_terry_runs`, else the setting, 1,000), at most 1,000."""
    wanted = (campaign.options or {}).get("bradley_terry_runs", settings.BRADLEY_TERRY_RUNS)
    return max(0, min(int(wanted), MAX_BOOTSTRAP_RUNS))


def _not_enough(pc: bt.PairCounts, fitted: bt.BTFit | None, names: list[str]) -> str | None:
    """Why the battles cannot give a leaderboard yet, or None."""
    played = np.zeros(pc.n_systems, dtype=bool)
    played[pc.i] = played[pc.j] = True
    if played.sum() < 2:
        return (f"{int((pc.wins_i + pc.wins_j + pc.ties).sum())} battles between {int(played.sum())} systems: "
                "Bradley–Terry needs battles between at least two systems")
    if fitted is not None and not fitted.exists:
        _, won, lost, tied = _per_system(pc)
        never = [names[i] for i in np.flatnonzero(played & (tied == 0) & ((lost == 0) | (won == 0)))]
        who = f" ({', '.join(never[:5])}{' …' if len(never) > 5 else ''} won or lost every battle)" if never else ""
        return ("too few battles for finite strengths: every system must beat or tie its way to every other "
                f"(Ford 1957){who}")
    return None


def _per_system(pc: bt.PairCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Battles, wins, losses and ties per system."""
    n = pc.n_systems
    wins = np.bincount(pc.i, pc.wins_i, n) + np.bincount(pc.j, pc.wins_j, n)
    losses = np.bincount(pc.i, pc.wins_j, n) + np.bincount(pc.j, pc.wins_i, n)
    ties = np.bincount(pc.i, pc.ties, n) + np.bincount(pc.j, pc.ties, n)
    return wins + losses + ties, wins, losses, ties


def analyse(battles: Battles, model: str, beta_runs: np.ndarray | None = None,
            confidence: float = CONFIDENCE) -> tuple[dict, list[dict], list[dict]]:
    """The fit's description, the leaderboard rows (by rank) and the win-rate matrix rows, from the stats core
    (`stats.bradley_terry`); with `beta_runs`, the bootstrap's intervals and rank ranges too."""
    names = battles.names
    pc = bt.pair_counts(battles.a, battles.b, battles.outcome, len(names))
    fit_row = {"tie_model": model, "tie_model_label": TIE_LABELS[model], "convention": CONVENTION,
               "battles": int(battles.size), "systems": len(names), "confidence": confidence}
    reason = _not_enough(pc, None, names)
    fitted = bt.fit(pc, model) if reason is None else None
    reason = reason or _not_enough(pc, fitted, names)
    if reason is not None:
        return {**fit_row, "status": "not_enough_data", "reason": reason}, [], []
    board = bt.leaderboard(fitted, beta_runs, confidence)
    n_battles, wins, losses, ties = _per_system(pc)
    ranged = board.runs > 0
    rows = [{"system": names[i], "score": finite(board.score[i]), "low": finite(board.low[i]),
             "high": finite(board.high[i]), "rank": int(board.rank[i]),
             "rank_range": [int(board.rank_low[i]), int(board.rank_high[i])] if ranged else None,
             "rank_ci": int(board.rank_ci[i]) if ranged else None, "battles": int(n_battles[i]), "wins": int(wins[i]),
             "losses": int(losses[i]), "ties": int(ties[i]), "win_rate": finite((wins[i] + ties[i] / 2) / n_battles[i]),
             "beta": finite(fitted.beta[i])} for i in np.flatnonzero(n_battles > 0)]
    rows.sort(key=lambda r: (r["rank"], r["system"]))
    empirical, predicted = bt.win_rates(pc, fitted)
    met = np.zeros((len(names),) * 2)
    met[pc.i, pc.j] = met[pc.j, pc.i] = pc.wins_i + pc.wins_j + pc.ties
    order = [names.index(r["system"]) for r in rows]
    matrix = [{"system": names[i], "opponent": names[j], "battles": int(met[i, j]), "win_rate": finite(empirical[i, j]),
               "predicted": finite(predicted[i, j])} for i in order for j in order if i != j]
    return {**fit_row, "status": "ready", "reason": "", "tie_parameter": fitted.tie_param,
            "loglik": fitted.loglik, "runs": board.runs}, rows, matrix


def _store(campaign: Campaign, fit_row: dict, rows: list[dict], matrix: list[dict]) -> None:
    with transaction.atomic():
        ResultTable.objects.filter(campaign=campaign, name__in=(TABLE, MATRIX, FIT)).delete()
        ResultTable.objects.bulk_create([
            ResultTable(campaign=campaign, name=TABLE, columns=list(COLUMNS), rows=jsonable(rows)),
            ResultTable(campaign=campaign, name=MATRIX, columns=list(MATRIX_COLUMNS), rows=jsonable(matrix)),
            ResultTable(campaign=campaign, name=FIT, columns=list(fit_row), rows=[jsonable(fit_row)])])


def _battles(campaign: Campaign, last_id: int) -> Battles | None:
    from .. import family_of  # the registry's lookup (evaluation.families), not any one family

    return family_of(campaign).battles(campaign, last_id)


class BradleyTerry:
    """The part: applies to every campaign of a family that offers it (the family declares its battles)."""

    name = "bradley_terry"
    label = "Bradley–Terry leaderboard"
    template = "evaluation/parts/bradley_terry.html"

    @staticmethod
    def applies(campaign: Campaign) -> bool:
        return True

    def compute(self, campaign: Campaign) -> None:
        """Fit on all the battles the stored results cover and store it; then queue the bootstrap's subtasks."""
        last_id = CampaignResults.objects.filter(campaign=campaign).values_list("last_judgment_id", flat=True).first()
        battles = _battles(campaign, last_id or 0)
        if battles is None:
            return
        model, runs = tie_model(campaign), runs_wanted(campaign)
        fit_row, rows, matrix = analyse(battles, model)
        pending = bool(rows) and runs > 0
        _store(campaign, {**fit_row, "runs_wanted": runs, "bootstrap": "pending" if pending else "none"}, rows, matrix)
        if pending:
            chunks = run_chunks(runs, settings.BRADLEY_TERRY_RUNS_PER_TASK)
            for index, chunk in enumerate(chunks):
                bradley_terry_runs.delay(campaign.pk, last_id, index, len(chunks), chunk)

    def answer(self, campaign: Campaign, params: Mapping[str, str]) -> dict:
        """The body of `GET /api/campaigns/<slug>/bradley_terry/`."""
        fit_row = stored_table(campaign, FIT)[1]
        return {**freshness(campaign).as_api(), **(fit_row[0] if fit_row else {"status": "not_computed"}),
                "results": stored_table(campaign, TABLE)[1], "win_rates": stored_table(campaign, MATRIX)[1]}

    def tables(self) -> list[Table]:
        return [Table(TABLE, _read(TABLE, COLUMNS), _latex), Table(MATRIX, _read(MATRIX, MATRIX_COLUMNS))]

    def page_context(self, campaign: Campaign) -> dict:
        """The fit, the leaderboard and the matrix as a grid (row system × column system), in one query."""
        stored = dict(ResultTable.objects.filter(campaign=campaign, name__in=(FIT, TABLE, MATRIX), variant="")
                      .values_list("name", "rows"))
        fit_row, rows = stored.get(FIT) or [], stored.get(TABLE) or []
        rates = {(m["system"], m["opponent"]): m for m in stored.get(MATRIX) or []}
        names = [r["system"] for r in rows]
        grid = [(a, [rates.get((a, b)) for b in names]) for a in names] if len(names) <= MATRIX_ON_PAGE else []
        return {"fit": fit_row[0] if fit_row else {}, "rows": rows, "names": names, "grid": grid}


@shared_task(acks_late=True, reject_on_worker_lost=True)
def bradley_terry_runs(campaign_id: int, last_id: int, index: int, n_chunks: int, runs: list[int]) -> dict:
    """One share of the bootstrap: β per run on the battles the results of `last_id` cover; the last share in
    stores the leaderboard with its intervals and rank ranges."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None or not current(campaign_id, last_id):
        return {"campaign": campaign_id, "status": "superseded"}
    battles, model = _battles(campaign, last_id), tie_model(campaign)
    pc = bt.pair_counts(battles.a, battles.b, battles.outcome, len(battles.names))
    start = bt.fit(pc, model)
    betas = bt.bootstrap_betas(pc, runs, int(campaign.seed or 0), model, start=start)

    def finish(beta_runs: np.ndarray) -> None:
        fit_row, rows, matrix = analyse(battles, model, beta_runs)
        _store(campaign, {**fit_row, "runs_wanted": runs_wanted(campaign), "bootstrap": "done"}, rows, matrix)

    return {"campaign": campaign_id, "status": gather_share(campaign, RUNS_TABLE, last_id, index, n_chunks, runs,
                                                            betas, finish)}


def _read(name: str, columns: tuple[str, ...]):
    def read(campaign, params):
        found, rows = stored_table(campaign, name)
        return found or list(columns), rows
    return read


def _interval(row) -> str:
    return "--" if row["low"] is None else f"[{row['low']:.0f}, {row['high']:.0f}]"


def _latex(campaign, params) -> str:
    fit_row = stored_table(campaign, FIT)[1]
    model = TIE_LABELS.get(fit_row[0]["tie_model"], "") if fit_row else ""
    rows = [{**r, "interval": _interval(r), "ranks": "--" if not r["rank_range"] else
             f"{r['rank_range'][0]}--{r['rank_range'][1]}"} for r in stored_table(campaign, TABLE)[1]]
    return booktabs([("Rank", "rank", "r"), ("System", "system", "l"), ("Score", "score", "r"),
                     ("95% interval", "interval", "c"), ("Rank range", "ranks", "c"), ("Battles", "battles", "r"),
                     ("Win rate", "win_rate", "r")], rows,
                    {"score": lambda v: f"{v:.0f}", "win_rate": lambda v: "--" if v is None else f"{v:.3f}"},
                    caption=f"{campaign.name}: Bradley-Terry leaderboard, ties after {model}; Elo-like score "
                            "(400/ln 10 per unit of log-strength, mean 1000), bootstrap percentile intervals")


BRADLEY_TERRY = BradleyTerry()

__all__ = ["BRADLEY_TERRY", "BradleyTerry", "analyse", "bradley_terry_runs"]
