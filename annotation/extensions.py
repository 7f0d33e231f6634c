"""What the annotation app asks of the app that computes results, which it never imports.

The campaign API shows when the results were last computed (`results_computed_at`) and the judgment export gives
each score its z (docs/methods.md §5); both come from the results. Annotation declares what it needs here, with
answers for a deployment without results (none), and the evaluation app installs its own in
`EvaluationConfig.ready()`.
"""
from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet


class ResultsSource:
    """The results of campaigns, as the campaign API and the judgment export read them. The defaults say "no
    results": a subclass answers from stored results."""

    def with_results(self, campaigns: QuerySet) -> QuerySet:
        """`campaigns` made ready to answer `computed_at` without a query per campaign (a join, say)."""
        return campaigns

    def computed_at(self, campaign) -> datetime | None:
        """When the campaign's results were last computed; None if never."""
        return None

    def standardisation(self, campaign) -> dict[int, tuple[float, float]]:
        """Per annotator id, the (mean, sd) that turn their scores into z-scores; empty where there are none."""
        return {}

    def recompute(self, campaign) -> bool:
        """Queue the campaign's results to be computed again (its options changed); False if it could not be."""
        return False


_installed: list[ResultsSource] = [ResultsSource()]


def results_source() -> ResultsSource:
    """The installed results source (the default's answers until an app installs one)."""
    return _installed[0]


def install_results_source(source: ResultsSource) -> None:
    """Make `source` the one the campaign API and the judgment export ask (called from an AppConfig.ready)."""
    _installed[0] = source


class OutcomeCodes:
    """The completion code a crowd worker is given when their HIT ends without being finished, by outcome:
    "gated" (stopped by the live reliability gate, or blocked) or "timed_out" (idle past the HIT's timeout). A
    crowd market app (prolific/) answers with the codes its study maps to the market's actions; by default there
    is none, and the worker sees the message alone."""

    def code_for(self, campaign, outcome: str) -> str | None:
        return None


_outcome_codes: list[OutcomeCodes] = [OutcomeCodes()]


def outcome_codes() -> OutcomeCodes:
    return _outcome_codes[0]


def install_outcome_codes(source: OutcomeCodes) -> None:
    """Make `source` the one the annotator pages ask (called from an AppConfig.ready)."""
    _outcome_codes[0] = source
