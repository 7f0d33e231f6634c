"""The instruction-following result part (docs/methods.md#instruction-following): offered by every family that
declares it (`Offers.parts`) for a campaign whose option `instruction_judgment` is on, whatever its protocol.

It reads the judgments' instruction answers (`Judgment.instruction`, one per translation judged), maps each to its
system through the protocol's declared role `instruction_systems`, and stores two tables beside the family's own:
`instruction_following` (per system: yes / partly / no counts and shares with 95 % Wilson intervals, and the mean
score yes=2, partly=1, no=0) and `instruction_pairs` (per two systems: the paired sign test on the items both were
judged on). Only system items count: quality-control copies (bad references, repeats, spam, gold, degraded
candidates) are left out.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from django.db import transaction

from annotation.models import Campaign, Judgment

from ...charts.instructions import instruction_bars
from ...models import ResultTable
from ...services.latex import booktabs, percent
from ...services.results_read import freshness, stored_reader, stored_table
from ...services.storing import jsonable
from ...stats.instructions import ANSWERS, answer_shares, item_means, sign_tests
from ..base import Table

SYSTEMS_TABLE, PAIRS_TABLE = "instruction_following", "instruction_pairs"
_INDEX = {answer: k for k, answer in enumerate(ANSWERS)}


@dataclass
class Answers:
    """One row per translation judged: its system (index into `systems`), its item and its answer (0 yes, 1 partly,
    2 no)."""

    systems: list[str]
    system: np.ndarray
    item: np.ndarray
    answer: np.ndarray
    n_items: int


def load_answers(campaign: Campaign) -> Answers:
    """The campaign's instruction answers on system items, each mapped to its system by the protocol's role."""
    protocol, options = campaign.protocol_spec, campaign.options or {}
    rows = (Judgment.objects.filter(campaign=campaign, instruction__isnull=False, item__item_type="system")
            .order_by("pk").values_list("instruction", "item__payload", "item__output__system__name",
                                        "item__segment_id", "item_id").iterator(chunk_size=2000))
    names: dict[str, int] = {}
    items: dict[object, int] = {}
    system, item, answer = [], [], []
    for judged, payload, output_system, segment, item_id in rows:
        targets = protocol.instruction_systems(payload or {}, output_system, options)
        unit = segment if segment is not None else (payload or {}).get("key") or f"item:{item_id}"
        for key, value in (judged or {}).items():
            name = targets.get(key)
            if name is None or not isinstance(value, dict) or value.get("answer") not in _INDEX:
                continue
            system.append(names.setdefault(name, len(names)))
            item.append(items.setdefault(unit, len(items)))
            answer.append(_INDEX[value["answer"]])
    order = sorted(names, key=str)
    remap = np.array([order.index(n) for n in names], dtype=np.int64) if names else np.zeros(0, np.int64)
    as_array = np.asarray(system, dtype=np.int64)
    return Answers(systems=order, system=remap[as_array] if as_array.size else as_array,
                   item=np.asarray(item, dtype=np.int64), answer=np.asarray(answer, dtype=np.int64), n_items=len(items))


def _finite(value) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)


def instruction_tables(answers: Answers) -> dict[str, list[dict]]:
    """The two tables from the answers (empty lists when there are none)."""
    n = len(answers.systems)
    if n == 0:
        return {SYSTEMS_TABLE: [], PAIRS_TABLE: []}
    shares = answer_shares(answers.system, answers.answer, n)
    means = item_means(answers.system, answers.item, answers.answer, n, answers.n_items)
    mean_score = (shares.counts @ np.array([2.0, 1.0, 0.0])) / np.maximum(shares.n, 1)
    systems = []
    for i, name in enumerate(answers.systems):
        row = {"system": name, "n": int(shares.n[i]), "mean_score": _finite(mean_score[i])}
        for k, answer in enumerate(ANSWERS):
            row[answer] = int(shares.counts[i, k])
            row[f"{answer}_share"] = _finite(shares.share[i, k])
            row[f"{answer}_low"] = _finite(shares.low[i, k])
            row[f"{answer}_high"] = _finite(shares.high[i, k])
        systems.append(row)
    systems.sort(key=lambda r: (-(r["mean_score"] or 0.0), r["system"]))
    tests = sign_tests(means)
    pairs = [{"system_a": answers.systems[i], "system_b": answers.systems[j], "a_better": int(tests.wins[i, j]),
              "b_better": int(tests.wins[j, i]), "ties": int(tests.ties[i, j]),
              "p_value": _finite(tests.p_value[i, j])}
             for i in range(n) for j in range(i + 1, n)]
    return {SYSTEMS_TABLE: systems, PAIRS_TABLE: pairs}


class InstructionFollowing:
    """The part: whether it applies to a campaign, its computation, tables, API answer and page section."""

    name = "instruction-following"
    label = "Instruction following"
    template = "evaluation/parts/instruction_following.html"

    @staticmethod
    def applies(campaign: Campaign) -> bool:
        return bool((campaign.options or {}).get("instruction_judgment"))

    def compute(self, campaign: Campaign) -> None:
        """Store the part's tables, replacing its earlier ones (the family's own tables stay)."""
        tables = instruction_tables(load_answers(campaign))
        with transaction.atomic():
            ResultTable.objects.filter(campaign=campaign, name__in=list(tables)).delete()
            ResultTable.objects.bulk_create(
                ResultTable(campaign=campaign, name=name, columns=list(dict.fromkeys(c for r in rows for c in r)),
                            rows=jsonable(rows)) for name, rows in tables.items())

    def answer(self, campaign: Campaign, params: Mapping[str, str]) -> dict:
        """The body of `GET /api/campaigns/<slug>/instruction-following/`."""
        return {**freshness(campaign).as_api(), "systems": stored_table(campaign, SYSTEMS_TABLE)[1],
                "pairs": stored_table(campaign, PAIRS_TABLE)[1], "test": "two-sided exact sign test"}

    def tables(self) -> list[Table]:
        return [Table(SYSTEMS_TABLE, stored_reader(SYSTEMS_TABLE, SYSTEM_COLUMNS), _systems_latex),
                Table(PAIRS_TABLE, stored_reader(PAIRS_TABLE, PAIR_COLUMNS), _pairs_latex)]

    def page_context(self, campaign: Campaign) -> dict:
        rows = stored_table(campaign, SYSTEMS_TABLE)[1]
        return {"rows": rows, "pairs": stored_table(campaign, PAIRS_TABLE)[1],
                "chart": instruction_bars(rows, title="Did the translation follow the instructions?")}


SYSTEM_COLUMNS = ("system", "n", "mean_score", *(f"{a}{suffix}" for a in ANSWERS
                                                   for suffix in ("", "_share", "_low", "_high")))
PAIR_COLUMNS = ("system_a", "system_b", "a_better", "b_better", "ties", "p_value")




def _systems_latex(campaign, params) -> str:
    rows = [{**r, **{f"{a}_ci": f"{percent(r[f'{a}_share'])} [{percent(r[f'{a}_low'])}, {percent(r[f'{a}_high'])}]"
                     for a in ANSWERS}} for r in stored_table(campaign, SYSTEMS_TABLE)[1]]
    return booktabs([("System", "system", "l"), ("n", "n", "r"), ("Yes % [95% CI]", "yes_ci", "r"),
                     ("Partly % [95% CI]", "partly_ci", "r"), ("No % [95% CI]", "no_ci", "r"),
                     ("Mean (0-2)", "mean_score", "r")], rows,
                    {"mean_score": lambda v: "--" if v is None else f"{v:.2f}"},
                    caption="Instruction following per system: shares with 95% Wilson intervals")


def _pairs_latex(campaign, params) -> str:
    return booktabs([("System A", "system_a", "l"), ("System B", "system_b", "l"), ("A better", "a_better", "r"),
                     ("B better", "b_better", "r"), ("Ties", "ties", "r"), ("p", "p_value", "r")],
                    stored_table(campaign, PAIRS_TABLE)[1], {"p_value": lambda v: "--" if v is None else f"{v:.4f}"},
                    caption="Instruction following: two-sided exact sign test on shared items")


INSTRUCTION_FOLLOWING = InstructionFollowing()
