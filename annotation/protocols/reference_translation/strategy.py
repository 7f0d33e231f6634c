"""Crowd reference translations in two stages (docs/methods.md §9; Callison-Burch 2009 §5.1):

* `reference-translation` (stage *translate*): a screen of up to 10 consecutive source sentences of one
  document, a text box each; the judge translates them faithfully in meaning and style, fluently, adding and
  dropping nothing, without machine translation. Five translators per sentence by default (the HIT's
  redundancy). The first screen of every HIT asks a short language background (native language, years of
  study or use of the target language, country); the screen detects pasting into a box and sends a `pasted`
  flag per sentence with the answer (the server cannot see pasting; it stores what the screen says). An empty
  translation is refused, and so is one identical (up to white space) to its source sentence when the source
  holds a letter (a sentence of numbers alone may stay as it is). A translation identical (up to white space)
  to one of the campaign's system outputs of that sentence is accepted but marked: the server stores the copied
  system's name in `mt_copy` (the detect stage and the results then show it).
* `reference-translation-detect` (stage *detect MT*, built by itself from finished translations): one screen per
  source sentence, its translations mixed with the machine translations of the same sentence (the campaign's
  system outputs), shuffled under opaque keys; the judge clicks the ones that look machine-made. A translation
  is flagged when a strict majority of the detect judges who saw it marked it; a translator flagged in at least
  `flag_threshold` (30 %) of their judged sentences is excluded. A judge never gets a HIT holding their own
  translations (option `exclude_own_work`, on by default).

The statistics (BLEU with sacrebleu, the exclusions, the accepted translations) are the `reference-translation`
family's.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from decimal import Decimal

from annotation.building.hit_layout import CampaignContent, HitPlanError, ItemPlan
from annotation.building.screen_context import (
    DOCUMENT_OUTPUTS,
    DOCUMENT_SEGMENTS,
    document_outputs,
    document_segments,
)
from annotation.building.shared_options import SCREENS_PER_HIT
from annotation.building.stage_specs import StagePlan, StageSpec
from annotation.protocols.base import (
    JudgmentError,
    Protocol,
    Screen,
    language_name,
    require_item_id,
    require_number,
    require_only,
)
from annotation.protocols.common_options import EXCLUDE_OWN_WORK
from annotation.protocols.options import Option

SENTENCES_PER_SCREEN = 10
MAX_TRANSLATION = 5_000
MAX_BACKGROUND_TEXT = 64
MAX_CANDIDATES = 100
BACKGROUND_KEYS = ("native_language", "target_language_years", "country")

TRANSLATE_OPTIONS = (
    SCREENS_PER_HIT,
    Option("detectors", "int", 3, "Judges per sentence in the detect-MT stage (a translation is flagged when a "
           "strict majority of them mark it machine-made).", minimum=1, maximum=25, target="options"),
    Option("detect_items_per_hit", "int", 10, "Sentences (screens) per detect-MT HIT.", minimum=1, maximum=200,
           target="options"),
    Option("detect_payment_per_hit", "decimal", Decimal("0"), "What a detect-MT judge earns per HIT.",
           minimum=Decimal("0"), maximum=Decimal("999999.99"), decimal_places=2, target="options"),
    Option("flag_threshold", "float", 0.3, "A translator whose translations are flagged as machine-made in at "
           "least this share of their judged sentences is excluded.", minimum=0.0, maximum=1.0, target="options"),
    EXCLUDE_OWN_WORK,
)


def normal(text: str) -> str:
    return " ".join(text.split())


def _string_list(body: dict, key: str, what: str) -> list:
    value = body.get(key)
    if not isinstance(value, list) or not value or len(value) > SENTENCES_PER_SCREEN:
        raise JudgmentError(f"'{key}' must be a list of 1 to {SENTENCES_PER_SCREEN} {what}")
    return value


def _background(value) -> dict:
    if not isinstance(value, dict):
        raise JudgmentError("'background' must be an object {\"native_language\", \"target_language_years\", "
                            "\"country\"}")
    unknown = sorted(set(value) - set(BACKGROUND_KEYS))
    if unknown:
        raise JudgmentError(f"unexpected background field {unknown[0][:40]!r}; the fields are "
                            + ", ".join(BACKGROUND_KEYS))
    out = {}
    for key in ("native_language", "country"):
        text = value.get(key)
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_BACKGROUND_TEXT:
            raise JudgmentError(f"background '{key}' must be a non-empty text of at most {MAX_BACKGROUND_TEXT} "
                                "characters")
        out[key] = normal(text)
    try:
        years = require_number(value, "target_language_years", 0, 100)
    except JudgmentError:
        raise JudgmentError("background 'target_language_years' must be a number of years from 0 to 100") from None
    out["target_language_years"] = int(years) if years.is_integer() else years
    return out


class ReferenceTranslation(Protocol):
    name = "reference-translation"
    label = "Crowd reference translations (translate, then detect MT)"
    family = "reference-translation"
    screen = Screen("reference_translation/reference_translation.html",
                    ("reference_translation/reference_translation.js",))
    stage_name = "translate"
    default_redundancy = 5
    own_options = TRANSLATE_OPTIONS
    screen_reads = frozenset({DOCUMENT_SEGMENTS, DOCUMENT_OUTPUTS})

    def default_statement(self, language: str) -> str:
        return (f"Translate each sentence into {language_name(language)}: faithful to its meaning and style, "
                "fluent, adding and dropping nothing. Do not use machine translation.")

    def check_options(self, options: dict, system_names: set[str], hit_size: int) -> list[str]:
        options.setdefault("detectors", 3)
        options.setdefault("detect_items_per_hit", 10)
        options["detect_payment_per_hit"] = str(options.get("detect_payment_per_hit") or "0")  # JSON: text
        options.setdefault("flag_threshold", 0.3)
        options.setdefault("exclude_own_work", True)
        return []

    def plan_hits(self, content: CampaignContent, hit_size, options, rng: random.Random):
        """Screens of up to 10 consecutive sentences of one document, shuffled into HITs of `screens_per_hit`;
        every sentence is on exactly one screen (the translators are the HIT's redundancy)."""
        documents: dict[int, list[int]] = {}
        for segment in content.segments:
            documents.setdefault(segment.doc, []).append(segment.index)
        screens = [(indices[start], len(indices[start:start + SENTENCES_PER_SCREEN]))
                   for doc in sorted(documents) for indices in [documents[doc]]
                   for start in range(0, len(indices), SENTENCES_PER_SCREEN)]
        if not screens:
            raise HitPlanError("the file has no segments")
        rng.shuffle(screens)
        return [[ItemPlan(position=p, set_index=p, item_type="system", segment_id=first, output_id=None,
                          payload={"count": count})
                 for p, (first, count) in enumerate(screens[h:h + hit_size])]
                for h in range(0, len(screens), hit_size)]

    def item_payload(self, item) -> dict:
        rows = _screen(item)
        return {"id": item.id, "protocol": self.name, "source": [r.source for r in rows],
                "ask_background": item.position == 0}

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        require_only(body, {"item", "translations", "pasted", "background"},
                     '{"item", "translations", "pasted", "background"}')
        translations = _string_list(body, "translations", "translations")
        for k, text in enumerate(translations, start=1):
            if not isinstance(text, str):
                raise JudgmentError(f"translation {k} must be a string")
            if len(text) > MAX_TRANSLATION:
                raise JudgmentError(f"translation {k} must be at most {MAX_TRANSLATION} characters")
            if not text.strip():
                raise JudgmentError(f"translation {k} is empty: translate every sentence")
        pasted = body.get("pasted")
        if not isinstance(pasted, list) or len(pasted) != len(translations) \
                or not all(isinstance(p, bool) for p in pasted):
            raise JudgmentError("'pasted' must be a list of true/false, one per translation (whether text was "
                                "pasted into its box)")
        answer = {"translations": [normal(t) for t in translations], "pasted": list(pasted)}
        if "background" in body:
            answer["background"] = _background(body["background"])
        return {"answer": answer}

    def check_answer(self, item, fields: dict) -> None:
        rows = _screen(item)
        answer = fields["answer"]
        translations = answer["translations"]
        if len(translations) != len(rows):
            raise JudgmentError(f"'translations' holds {len(translations)} translations; the screen shows "
                                f"{len(rows)} sentences")
        for k, (row, translation) in enumerate(zip(rows, translations, strict=True), start=1):
            if translation == normal(row.source) and any(c.isalpha() for c in row.source):
                raise JudgmentError(f"translation {k} is the source sentence itself: translate it into the target "
                                    "language")
        if item.position == 0 and "background" not in answer:
            raise JudgmentError("'background' is missing: the first screen of a HIT asks for your native language, "
                                "years of study or use of the target language and country")
        if item.position != 0 and "background" in answer:
            raise JudgmentError("'background' is asked on the first screen of a HIT only")
        machine: dict[int, list[tuple[str, int, str]]] = {}  # as mt_outputs gives it, from the judging read
        for segment, _, text, _, pk, name in document_outputs(item):
            machine.setdefault(segment, []).append((name, pk, text))
        answer["mt_copy"] = [next((system for system, _pk, text in machine.get(r.segment, ())
                                   if normal(text) == translation), None)
                             for r, translation in zip(rows, translations, strict=True)]

    def next_stages(self, options: dict) -> list:
        return [StageSpec("detect-mt", "reference-translation-detect", redundancy=int(options.get("detectors", 3)),
                          hit_size=int(options.get("detect_items_per_hit", 10)),
                          payment_per_hit=Decimal(str(options.get("detect_payment_per_hit", "0"))),
                          options={"exclude_own_work": bool(options.get("exclude_own_work", True))})]

    def preview_type(self, item) -> str:
        """The screen's own name for what it shows: sentences to translate, no system output."""
        return "Sentences to translate"

    def preview_systems(self, item, options: dict) -> str:
        return ""


class ReferenceTranslationDetect(Protocol):
    """Built from the translate stage: one item per source sentence of a finished translate screen (its candidates
    — the translations and the system outputs, shuffled under keys c1, c2, … — in the payload)."""

    name = "reference-translation-detect"
    label = "Crowd reference translations: detect machine translation (stage of reference-translation)"
    family = "reference-translation"
    screen = Screen("reference_translation/reference_translation_detect.html",
                    ("reference_translation/reference_translation_detect.js",))
    stage_name = "detect-mt"
    stage_only = True

    def default_statement(self, language: str) -> str:
        return ("Some of these translations were written by people, others by machine translation. Click every one "
                "that looks machine-made.")

    def preview_type(self, item) -> str:
        """The screen's own name: translations, some written by people, some machine-made."""
        return "Translations (people or machine?)"

    def preview_systems(self, item, options: dict) -> str:
        """Who wrote each candidate: a system's name, or a translator (the worker id researchers see)."""
        from annotation.models import Annotator

        candidates = item.payload["candidates"]
        authors = {a.pk: a.label for a in Annotator.objects.select_related("user").filter(
            pk__in=[c["author"] for c in candidates if "author" in c])}
        return "\n".join(f"{c['key']}: " + (str(c["system"]) if "system" in c else
                                             f"translator {authors.get(c.get('author'), '?')}") for c in candidates)

    def item_payload(self, item) -> dict:
        return {"id": item.id, "protocol": self.name, "source": item.segment.source,
                "candidates": [{"key": c["key"], "text": c["text"]} for c in item.payload["candidates"]]}

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        require_only(body, {"item", "machine"}, '{"item", "machine"}')
        machine = body.get("machine")
        if not isinstance(machine, list) or len(machine) > MAX_CANDIDATES \
                or not all(isinstance(k, str) and 0 < len(k) <= 16 for k in machine):
            raise JudgmentError("'machine' must be a list of the keys of the candidates that look machine-made "
                                "(empty when none does)")
        if len(set(machine)) != len(machine):
            raise JudgmentError("'machine' names a candidate twice")
        return {"answer": {"machine": sorted(machine)}}

    def check_answer(self, item, fields: dict) -> None:
        keys = {c["key"] for c in item.payload["candidates"]}
        wrong = [k for k in fields["answer"]["machine"] if k not in keys]
        if wrong:
            raise JudgmentError(f"'machine' names {wrong[0][:16]!r}, which is not a candidate of this screen; the "
                                f"candidates are {', '.join(sorted(keys))}")

    def hit_exposure(self, items) -> dict:
        return {"authors": sorted({c["author"] for i in items for c in i.payload["candidates"] if "author" in c})}

    def conflicts(self, exposure: dict, seen: list[dict], annotator_id: int | None = None) -> bool:
        return annotator_id in (exposure.get("authors") or ())

    def plan_stage(self, stage, source, source_complete: bool) -> StagePlan:
        """One item per sentence of a translate screen once all its translators are done (the HIT's redundancy)
        or the translate stage is complete: the sentence's translations and its system outputs, shuffled. Full
        HITs of `hit_size` items, and the rest once the translate stage is complete. A worker never gets a HIT
        holding their own translations when `exclude_own_work` is on."""
        from annotation.models import Assignment, HitItem, Judgment

        used = {(p["translate_item"], p["index"]) for p in HitItem.objects.filter(hit__campaign=stage)
                .values_list("payload", flat=True)}
        judgments: dict[int, list[tuple[int, int, dict]]] = {}
        for pk, author, answer, item in (Judgment.objects.filter(
                campaign=source, assignment__status=Assignment.Status.COMPLETED, answer__isnull=False)
                .order_by("pk").values_list("pk", "annotator_id", "answer", "item_id")):
            judgments.setdefault(item, []).append((pk, author, answer))
        ready_items = [item for item, rows in judgments.items()
                       if (len(rows) >= source.redundancy or source_complete)
                       and any((item, k) not in used for k in range(len(rows[0][2]["translations"])))]
        screens = screen_rows(HitItem.objects.filter(pk__in=ready_items).select_related("segment"))
        machine = mt_outputs([r.segment for rows in screens.values() for r in rows])
        rng = random.Random(f"{stage.seed}:{len(used)}")
        ready = []
        for item in sorted(ready_items):
            for k, row in enumerate(screens[item]):
                if (item, k) in used:
                    continue
                candidates = [{"text": answer["translations"][k], "judgment": pk, "author": author}
                              for pk, author, answer in judgments[item]]
                candidates += [{"text": text, "system": system, "output": output}
                               for system, output, text in machine.get(row.segment, ())]
                rng.shuffle(candidates)
                for n, candidate in enumerate(candidates, start=1):
                    candidate["key"] = f"c{n}"
                ready.append((item, k, row.segment, candidates))
        rng.shuffle(ready)
        size = stage.hit_size
        exclude = (stage.options or {}).get("exclude_own_work", True)
        hits = []
        while len(ready) >= size or (source_complete and ready):
            chunk, ready = ready[:size], ready[size:]
            items = [ItemPlan(position=p, set_index=p, item_type="system", segment_id=segment, output_id=None,
                              payload={"translate_item": item, "index": k, "candidates": candidates})
                     for p, (item, k, segment, candidates) in enumerate(chunk)]
            hits.append((items, self.hit_exposure(items) if exclude else {}))
        return StagePlan(hits)


@dataclass(frozen=True)
class ScreenRow:
    """One sentence of a translate screen: its segment's pk, source and professional reference."""

    segment: int
    source: str
    reference: str


def _screen(item) -> list[ScreenRow]:
    """The sentences of one translate screen, as `screen_rows` gives them, from the item's document as the judging
    read brought it along: `count` segments from the item's segment on, by seg_id."""
    segments = document_segments(item)
    first = next(k for k, (pk, _, _) in enumerate(segments) if pk == item.segment_id)
    return [ScreenRow(pk, source, reference or "") for pk, source, reference in
            segments[first:first + item.payload["count"]]]


def screen_rows(items) -> dict[int, list[ScreenRow]]:
    """The sentences of translate screens (HitItems of `reference-translation`), by item id: `count` consecutive
    segments of the item's document from the item's segment on."""
    from annotation.models import Segment

    items = list(items)
    documents = {i.segment.document_id for i in items}
    segments: dict[int, list[tuple]] = {}
    for row in (Segment.objects.filter(document_id__in=documents).order_by("document_id", "seg_id")
                .values_list("document_id", "seg_id", "pk", "source", "reference")):
        segments.setdefault(row[0], []).append(row)
    return {item.pk: [ScreenRow(r[2], r[3], r[4] or "") for r in segments[item.segment.document_id]
                      if r[1] >= item.segment.seg_id][:item.payload["count"]] for item in items}


def mt_outputs(segments) -> dict[int, list[tuple[str, int, str]]]:
    """The campaign's system outputs (the machine translations) of these segments: {segment pk: [(system name,
    output pk, text)]}, systems in their stored order."""
    from annotation.models import SystemOutput

    out: dict[int, list[tuple[str, int, str]]] = {}
    for segment, name, pk, text in (SystemOutput.objects.filter(segment_id__in=set(segments))
                                    .order_by("system_id").values_list("segment_id", "system__name", "pk", "text")):
        out.setdefault(segment, []).append((name, pk, text))
    return out


#: The protocols of this package, in the order of the protocol choices (settings.MTEVAL_PROTOCOLS).
PROTOCOLS = (
    ReferenceTranslation(),
    ReferenceTranslationDetect(),
)
