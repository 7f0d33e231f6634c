"""Reading comprehension in four stages (docs/methods.md §9; Callison-Burch 2009 §5.3). An article is a document of
the campaign file; its human translation is the `reference` of its segments.

* `reading-comprehension` (stage *write*, imported): a judge reads the human translation of one article and
  writes three questions with sample answers: why / how things relate, answerable in a few words; no numbers,
  dates or yes/no questions. Three non-empty, distinct questions are required; a sample answer that looks like
  yes/no or is only a number is accepted but flagged (`flags` stored with the question, shown by the screen).
* `reading-comprehension-vote` (stage *vote*): other judges see the article and one question with its sample
  answer, say whether it is a good question, and whether it is redundant with another question of the article
  (which one). A question is kept when its share of "good" votes reaches `vote_threshold` and a majority of its
  voters did not mark it redundant with an earlier kept question (`select_questions`); the researcher can keep
  or drop questions by hand (the vote stage's `question_overrides`, see `set_override`).
* `reading-comprehension-answer` (stage *answer*): a judge reads ONE translation of an article (one system's
  output of each of its segments, or the human translation as a control) and answers the kept questions. No
  judge ever gets two translations of one article: each answer HIT's exposure holds the key
  "article:<document pk>" under "exclusive", which hand-out stores in `StageExposure` under a unique constraint.
  The writers and voters of an article never answer its questions (they have read the human translation).
* `reading-comprehension-grade` (stage *grade*): a judge compares a given answer with the sample answer and says
  whether it is correct; majority of `graders` (3). An empty answer ("not in this translation") is incorrect
  without grading. A judge never grades their own answers.

This module is the write stage; the vote, answer and grade stages are in `stage_strategy.py`. The statistics are
the `reading-comprehension` family's (share of questions answered correctly, Wilson interval).
"""
from __future__ import annotations

import random
from decimal import Decimal

from annotation.building.hit_layout import CampaignContent, HitPlanError, ItemPlan
from annotation.building.screen_context import DOCUMENT_SEGMENTS, document_segments
from annotation.building.stage_specs import StageSpec
from annotation.protocols.base import (
    JudgmentError,
    Protocol,
    Screen,
    require_item_id,
    require_only,
)
from annotation.protocols.common_options import EXCLUDE_OWN_WORK
from annotation.protocols.options import Option

from .comprehension import answer_flags

QUESTIONS_PER_ARTICLE = 3
MAX_QUESTION = 500
MAX_SAMPLE_ANSWER = 300
MAX_ANSWER = 1_000

OPTIONS = (
    Option("articles_per_hit", "int", 1, "Articles per question-writing HIT (each writer writes three questions "
           "per article).", minimum=1, maximum=20, key="hit_size"),
    Option("voters", "int", 3, "Judges who vote on each question.", minimum=1, maximum=25, target="options"),
    Option("vote_threshold", "float", 0.5, "A question is kept when at least this share of its voters call it "
           "good (and a majority does not find it redundant with an earlier kept question).", minimum=0.0,
           maximum=1.0, target="options"),
    Option("answerers", "int", 1, "Judges who answer the questions on each translation of an article (each "
           "judge reads one translation of an article at most).", minimum=1, maximum=25, target="options"),
    Option("graders", "int", 3, "Judges who grade each answer (majority).", minimum=1, maximum=25,
           target="options"),
    Option("grade_items_per_hit", "int", 20, "Answers per grading HIT.", minimum=1, maximum=200,
           target="options"),
    Option("vote_payment_per_hit", "decimal", Decimal("0"), "What a voter earns per HIT (one article's questions).",
           minimum=Decimal("0"), maximum=Decimal("999999.99"), decimal_places=2, target="options"),
    Option("answer_payment_per_hit", "decimal", Decimal("0"), "What a judge earns per answering HIT (one "
           "article).", minimum=Decimal("0"), maximum=Decimal("999999.99"), decimal_places=2, target="options"),
    Option("grade_payment_per_hit", "decimal", Decimal("0"), "What a grader earns per HIT.", minimum=Decimal("0"),
           maximum=Decimal("999999.99"), decimal_places=2, target="options"),
    EXCLUDE_OWN_WORK,
)
_DEFAULTS = {"voters": 3, "vote_threshold": 0.5, "answerers": 1, "graders": 3, "grade_items_per_hit": 20,
             "exclude_own_work": True}


def _normal(text: str) -> str:
    return " ".join(text.split())


def checked_text(value, what: str, cap: int, *, empty_ok: bool = False) -> str:
    if not isinstance(value, str):
        raise JudgmentError(f"{what} must be a string")
    if len(value) > cap:
        raise JudgmentError(f"{what} must be at most {cap} characters")
    value = _normal(value)
    if not value and not empty_ok:
        raise JudgmentError(f"{what} is empty")
    return value


class ReadingComprehension(Protocol):
    name = "reading-comprehension"
    label = "Reading comprehension (write questions, vote, answer, grade)"
    family = "reading-comprehension"
    screen = Screen("reading_comprehension/write.html", ("reading_comprehension/reading_comprehension.js",))
    requires_reference = True
    stage_name = "write"
    default_redundancy = 2
    own_options = OPTIONS
    screen_reads = frozenset({DOCUMENT_SEGMENTS})

    def default_statement(self, language: str) -> str:
        return ("Read the article and write three questions about it, each with a short sample answer: ask why "
                "things happen or how they are related, questions answerable in a few words; no numbers, dates or "
                "yes/no questions.")

    def check_options(self, options: dict, system_names: set[str], hit_size: int) -> list[str]:
        for key, value in _DEFAULTS.items():
            options.setdefault(key, value)
        for key in ("vote_payment_per_hit", "answer_payment_per_hit", "grade_payment_per_hit"):
            options[key] = str(options.get(key) or "0")  # JSON: text
        return []

    def plan_hits(self, content: CampaignContent, hit_size, options, rng: random.Random):
        """One item per article (its first segment; the screen shows all its segments' references), articles
        shuffled into HITs of `articles_per_hit`."""
        firsts: dict[int, int] = {}
        for segment in content.segments:
            firsts.setdefault(segment.doc, segment.index)
        if not firsts:
            raise HitPlanError("the file has no segments")
        articles = sorted(firsts.values())
        rng.shuffle(articles)
        return [[ItemPlan(position=p, set_index=p, item_type="reference", segment_id=first, output_id=None)
                 for p, first in enumerate(articles[h:h + hit_size])] for h in range(0, len(articles), hit_size)]

    def item_payload(self, item) -> dict:
        """The article's human translation (its segments' references), from what the judging read brought."""
        return {"id": item.id, "protocol": self.name,
                "article": [reference for _, _, reference in document_segments(item)], "count": QUESTIONS_PER_ARTICLE}

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        require_only(body, {"item", "questions"}, '{"item", "questions": [{"question", "answer"}, ×3]}')
        questions = body.get("questions")
        if not isinstance(questions, list) or len(questions) != QUESTIONS_PER_ARTICLE:
            raise JudgmentError(f"'questions' must be a list of {QUESTIONS_PER_ARTICLE} questions, each "
                                '{"question", "answer"}')
        out, seen = [], set()
        for k, q in enumerate(questions, start=1):
            if not isinstance(q, dict) or set(q) != {"question", "answer"}:
                raise JudgmentError(f'question {k} must be {{"question", "answer"}}')
            text = checked_text(q["question"], f"question {k}", MAX_QUESTION)
            sample = checked_text(q["answer"], f"the sample answer of question {k}", MAX_SAMPLE_ANSWER)
            key = text.casefold().rstrip("?. ")
            if key in seen:
                raise JudgmentError(f"question {k} repeats an earlier question: write three different questions")
            seen.add(key)
            out.append({"question": text, "answer": sample, "flags": answer_flags(sample)})
        return {"answer": {"questions": out}}

    def next_stages(self, options: dict) -> list:
        own = bool(options.get("exclude_own_work", True))
        return [
            StageSpec("vote", "reading-comprehension-vote", redundancy=int(options.get("voters", 3)),
                      hit_size=QUESTIONS_PER_ARTICLE * 5,
                      payment_per_hit=Decimal(str(options.get("vote_payment_per_hit", "0"))),
                      options={"vote_threshold": float(options.get("vote_threshold", 0.5)), "exclude_own_work": own,
                               "question_overrides": {}}),
            StageSpec("answer", "reading-comprehension-answer", redundancy=int(options.get("answerers", 1)),
                      hit_size=1, payment_per_hit=Decimal(str(options.get("answer_payment_per_hit", "0"))),
                      options={}, input="vote"),
            StageSpec("grade", "reading-comprehension-grade", redundancy=int(options.get("graders", 3)),
                      hit_size=int(options.get("grade_items_per_hit", 20)),
                      payment_per_hit=Decimal(str(options.get("grade_payment_per_hit", "0"))),
                      options={"exclude_own_work": own}, input="answer"),
        ]

    export_columns = ("answer",)

    def preview_systems(self, item, options: dict) -> str:
        return "human translation"
