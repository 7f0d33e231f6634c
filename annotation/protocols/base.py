"""What every protocol provides (see the registry in `__init__`)."""
from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import options as opts
from .common_options import ANALYSIS_OPTIONS, COMMON_OPTIONS, check_common
from .options import Option, ParsedOptions


class UnknownProtocol(ValueError):
    pass


class JudgmentError(ValueError):
    """A submitted answer is malformed or out of range; the message is shown to the client."""


LANGUAGE_NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
    "nl": "Dutch", "cs": "Czech", "pl": "Polish", "ru": "Russian", "uk": "Ukrainian", "zh": "Chinese",
    "ja": "Japanese", "ko": "Korean", "ar": "Arabic", "he": "Hebrew", "fa": "Persian", "tr": "Turkish",
    "fi": "Finnish", "et": "Estonian", "lv": "Latvian", "lt": "Lithuanian", "ro": "Romanian", "hi": "Hindi",
    "ta": "Tamil", "gu": "Gujarati", "kk": "Kazakh", "is": "Icelandic", "ha": "Hausa", "hr": "Croatian",
}
RTL_LANGUAGES = {"ar", "he", "fa", "ur", "ps", "yi", "dv", "ug", "ckb", "sd", "iw"}


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code.split("-")[0].lower(), code)


def is_rtl(code: str) -> bool:
    return code.split("-")[0].lower() in RTL_LANGUAGES


#: The largest id a row can have (PostgreSQL's bigint); an `item` beyond it names no item.
MAX_ID = 2**63 - 1


def require_item_id(body: Any) -> int:
    if not isinstance(body, dict):
        raise JudgmentError("the body must be a JSON object")
    item = body.get("item")
    if isinstance(item, bool) or not isinstance(item, int) or not 0 < item <= MAX_ID:
        raise JudgmentError("'item' must be the integer id of the item shown")
    return item


def require_only(body: dict, keys: set[str], shape: str) -> None:
    """Refuse a field the answer does not have (the first one, by name), so a typo is not silently ignored;
    `shape` shows the answer's fields in the message."""
    unknown = sorted(set(body) - keys)
    if unknown:
        raise JudgmentError(f"unexpected field {unknown[0][:40]!r}; the answer is {shape}")


YES_NO = {"yes": True, "no": False}


def require_yes_no(body: dict, key: str) -> bool:
    """`body[key]`, "yes" or "no", as a boolean (anything else, a list or an object too, is a 400)."""
    value = body.get(key)
    if not isinstance(value, str) or value not in YES_NO:
        raise JudgmentError(f"'{key}' must be \"yes\" or \"no\"")
    return YES_NO[value]


def number_shown(value: int | float) -> str:
    """A number for an error message: as written, or its length when it is an integer too long to show."""
    if isinstance(value, int) and abs(value) >= 10**15:
        return f"an integer of {len(str(abs(value)))} digits"
    return f"{value:g}"


def require_number(body: dict, key: str, low: float, high: float) -> float:
    """`body[key]` as a float in [low, high]. The one check of every number in an answer: JSON integers have no
    size limit, and an integer too large for a float is compared exactly (Python compares int and float without
    converting), so it is out of range (400) rather than an overflow (500)."""
    value = body.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or isinstance(value, float) and not math.isfinite(value):
        raise JudgmentError(f"'{key}' must be a number")
    if not low <= value <= high:
        raise JudgmentError(f"'{key}' must lie between {low:g} and {high:g}, not {number_shown(value)}")
    return float(value)


@dataclass(frozen=True)
class Screen:
    """A protocol's rating screen (its screen role): the template the HIT page includes and the static scripts it
    loads, in order, after the page's own (copy.js, hit.js); the page includes exactly these, so a protocol from
    another package brings its own screen and no shared page or script names a protocol."""

    template: str
    scripts: tuple[str, ...] = ()


class Protocol:
    """Base class of every protocol strategy. Its interface comes in roles, each a section below with its declared
    capabilities and their defaults, so that callers never probe for a hook: the identity and import options
    (what the setting registers and the import front-ends show), the planner (how the campaign's HITs are laid
    out), the screen (what the annotator sees), the answers (what a judgment holds), the stages (later stages
    built from this one's output), the export (the judgment export's extra columns) and the results (what the
    statistics read). A subclass sets the attributes and implements the methods its roles need."""

    # Identity and import options ----------------------------------------------------------------------------

    name: str = ""
    label: str = ""
    #: Campaign-file fields a segment must carry (beyond source and systems).
    requires_reference: bool = False
    #: The protocol's own import options, after the common ones.
    own_options: tuple[Option, ...] = ()
    #: Distinct workers per HIT when the import does not say (`redundancy`).
    default_redundancy: int = 1

    def default_statement(self, language: str) -> str:
        raise NotImplementedError

    def option_fields(self) -> list[Option]:
        """Every import option this protocol takes; the admin form, the API and the CLI are built from these."""
        return [*COMMON_OPTIONS, *self.own_options]

    def analysis_options(self) -> list[Option]:
        """The options of `option_fields()` that change only the statistics (`ANALYSIS_OPTIONS`): what an imported,
        analysis-only campaign takes at import and afterwards (docs/api.md#analysis-options)."""
        return [o for o in self.option_fields() if o.name in ANALYSIS_OPTIONS]

    def parse_analysis_options(self, raw: Mapping[str, object]) -> ParsedOptions:
        """`raw` validated against `analysis_options()`; raises `OptionError` naming every bad or foreign one."""
        return opts.parse(self.name, self.analysis_options(), raw)

    def check_parsed(self, values: dict) -> list[tuple[str, str]]:
        """Problems between parsed option values, as (field name, reason); empty when fine. A field that failed
        its own checks is None here."""
        return []

    def parse_options(self, raw: Mapping[str, object], *, defaults: Mapping[str, object] | None = None
                      ) -> ParsedOptions:
        """Validate raw option values (strings or typed); raises `OptionError` naming every bad field.

        `defaults` overrides option defaults for one front-end (the admin imports drafts)."""
        return opts.parse(self.name, self.option_fields(), raw, defaults=defaults,
                          check=lambda values: check_common(values) + self.check_parsed(values))

    def check_options(self, options: dict, system_names: set[str], hit_size: int) -> list[str]:
        """Problems with the protocol's options for this campaign's file, each message starting with the
        field it concerns ("systems: ..."); empty when fine. May fill in defaults."""
        return []

    # Planner --------------------------------------------------------------------------------------------------

    def plan_hits(self, content, hit_size: int, options: dict, rng: random.Random):
        """The campaign's HITs as lists of `ItemPlan`s, from a `building.hit_layout.CampaignContent`."""
        raise NotImplementedError

    def size_warnings(self, options: dict, n_systems: int, hit_size: int, hit_sizes: list[int]) -> list[str]:
        """Where the built HITs differ from what the options asked (e.g. fewer outputs per screen than
        screen_size), each message starting with the option; said at import and in the preview."""
        return []

    def hit_exposure(self, items) -> dict:
        """What a worker doing this HIT has seen, for protocols that keep workers apart (see `conflicts`)."""
        return {}

    def conflicts(self, exposure: dict, seen: list[dict], annotator_id: int | None = None) -> bool:
        """Whether a HIT with `exposure` must not go to a worker (`annotator_id`) whose earlier HITs of the
        campaign exposed `seen`."""
        return False

    def refusal(self, campaign, annotator) -> str | None:
        """Why this worker gets no new HIT of the campaign (the protocol's own quality control), or None. Asked
        when a worker without an unfinished HIT asks for one, never on the judging path."""
        return None

    # Screen ---------------------------------------------------------------------------------------------------

    #: The rating screen (templates/annotation/hit.html includes its template and scripts).
    screen: Screen | None = None
    #: What `item_payload` and `check_answer` read beyond the item (names in building/screen_context.py): the one
    #: read of the annotator path brings it along, so that no strategy queries the database there.
    screen_reads: frozenset[str] = frozenset()
    #: Whether the screen shows the item's whole document, so that its payload carries `document_media` (every
    #: segment's media, annotation/building/media_payload.py); None: a screen that reads its document does.
    shows_document: bool | None = None

    def item_payload(self, item) -> dict:
        """What the screen shows for `item`, and nothing else (never its type or system)."""
        raise NotImplementedError

    def page(self, item) -> list[dict] | None:
        """The items one screen shows together, from `item` on in order, each {"id": …} with what the screen shows
        of it (never its type or system), or None where the screen shows no pages (the default): a batch then
        follows the general rules. The annotator state carries a page of several; a batch from a paged item may
        not reach past its page, also when the page is that item alone (docs/architecture.md, "Pages")."""
        return None

    def preview_type(self, item) -> str:
        """The Type column of the admin's preview of `item`: by default its item type's label ("System output",
        "Gold", …); a screen that shows no system output says what it shows, as the screen does."""
        return item.get_item_type_display()

    def preview_systems(self, item, options: dict) -> str:
        """The System column of the admin's preview of `item`: by default the system of the item's output (pairwise
        says which system is on side A and which on B)."""
        return item.output.system.name if item.output_id is not None else ""

    def instruction_targets(self, item) -> list[tuple[str, str]]:
        """(key, label) of each translation `item` shows, for the instruction judgment (building/instructions.py):
        by default the one translation, key ''; screens of several candidates give one per candidate key."""
        return [("", "The translation")]

    def instruction_systems(self, payload: dict, output_system: str | None, options: dict) -> dict[str, str | None]:
        """Per key of `instruction_targets`, the name of the system whose translation it is (None: a control copy,
        not counted), from the item's stored payload and its output's system (the results read them)."""
        return {"": output_system}

    # Answers --------------------------------------------------------------------------------------------------

    def parse_judgment(self, body: Any) -> dict:
        """Validate a submitted answer; returns the `Judgment` fields it sets. Raises JudgmentError."""
        raise NotImplementedError

    def check_answer(self, item, fields: dict) -> None:
        """Check a parsed answer against the item it answers (e.g. that it ranks exactly the candidates shown);
        raises JudgmentError. Called for the current item only, after `parse_judgment`."""

    def check_expected(self, item, fields: dict):
        """A checked answer's verdict against the item's expected answer (a tutorial item's, from the campaign
        file: annotation.building.training.Check), or None when the item has none (the default)."""
        return None

    # Stages (multi-stage tasks, services/stages.py) -----------------------------------------------------------

    #: The name of the stage this protocol's campaigns are (edit, verify, …); empty for one-stage protocols.
    stage_name: str = ""
    #: A later stage is built from its input stage's output and cannot be imported on its own.
    stage_only: bool = False
    #: What a researcher may curate by hand in a stage's output (e.g. "questions"); empty: nothing.
    curated: str = ""

    def next_stages(self, options: dict) -> list:
        """The later stages (building.stage_specs.StageSpec) an import of this protocol creates, from its options."""
        return []

    def plan_stage(self, stage, source, source_complete: bool):
        """The new HITs of later stage `stage` that the output of its input stage `source` makes ready
        (building.stage_specs.StagePlan); `source_complete` says that no more output will come, so a last short
        HIT may be built. Called under a lock on `stage`."""
        raise NotImplementedError

    def curation_rows(self, campaign) -> list[dict]:
        """The stage's curatable output for the admin: [{key, text, detail, kept, override}], `override`
        True (kept by hand), False (dropped by hand) or None (as the judges decided)."""
        return []

    def curate(self, campaign, key: str, keep: bool | None) -> None:
        """Keep (True) or drop (False) one piece of output by hand, or give it back to the judges (None)."""
        raise NotImplementedError

    # Formats ----------------------------------------------------------------------------------------------------

    #: The formats of judgments collected elsewhere that this protocol reads: dotted paths of
    #: `building.judgment_files.JudgmentFormat`s, imported when an import asks (services/judgment_import.py
    #: offers those of the registered protocols), so a strategy loads no parser. Empty: none.
    judgment_formats: tuple[str, ...] = ()
    #: The judgment export's formats beyond csv and json that this protocol's campaigns may be written in: dotted
    #: paths of `building.judgment_files.ExportFormat`s (services/export.py offers those of the registered protocols).
    export_formats: tuple[str, ...] = ()

    # Export (the judgment export, docs/api.md §6.4) -----------------------------------------------------------

    #: Extra columns of the judgment export, and the item payload keys they are computed from.
    export_columns: tuple[str, ...] = ()
    export_payload_keys: tuple[str, ...] = ()

    def export_values(self, payload: dict, options: dict, row: dict) -> dict:
        """The extra export columns of one judgment, from its item's payload keys and the campaign options."""
        return {}

    # Results: what the statistics read (evaluation/families/) -------------------------------------------------

    #: Which statistics apply: the evaluation app maps a family to its analyses.
    family: str = ""
    #: Pairwise: the criterion judged (adequacy, fluency); empty for the others.
    criterion: str = ""
    #: Error spans: the spans carry an MQM category (and MQM's scoring applies).
    mqm: bool = False
    #: An item holds every system's candidate (contrastive ESA): the statistics read one row per candidate.
    contrastive: bool = False

    def categories(self, options: dict) -> list[str] | None:
        """The error categories a span may carry under these options (MQM's taxonomy); None: spans carry none."""
        return None
