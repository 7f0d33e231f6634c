"""The import options every protocol shares, declared once (docs/api.md §2; the Option mechanism is options.py):
the common options (`COMMON_OPTIONS`) and their checks (the completion URL's placeholders, the required native
language), the multi-stage option `EXCLUDE_OWN_WORK`, and which options only change the analysis
(`ANALYSIS_OPTIONS`). The protocol interface (base.py) offers them to every protocol."""
from __future__ import annotations

import string
from decimal import Decimal
from urllib.parse import urlsplit

from .. import languages
from .options import Option

#: What a completion URL may contain: the completion code and what the crowd market put into the start link
#: (docs/api.md §8). {turk_submit_to} (MTurk's `turkSubmitTo`) may only open the URL, as its whole host.
COMPLETION_PLACEHOLDERS = ("code", "worker_id", "assignment_id", "hit_id", "turk_submit_to", "study_id", "session_id")
COMPLETION_URL_EXAMPLE = "https://app.prolific.com/submissions/complete?cc={code}"


def placeholder_list() -> str:
    return ", ".join("{" + name + "}" for name in COMPLETION_PLACEHOLDERS)


def completion_url_problem(template: str) -> str | None:
    """Why `template` cannot be a campaign's completion URL, or None if it can: an http(s) URL whose scheme and host
    are written out (or come whole from MTurk's {turk_submit_to}), with only known placeholders."""
    known = placeholder_list()
    if any(c.isspace() for c in template):
        return "must not contain spaces"
    try:
        fields = [(name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(template)
                  if name is not None]
    except ValueError:
        return f"has an unmatched {{ or }}; the placeholders are {known}"
    for name, spec, conversion in fields:
        if name not in COMPLETION_PLACEHOLDERS:
            return f"has an unknown placeholder {{{name}}}; the placeholders are {known}"
        if spec or conversion:
            return f"has a formatted placeholder; write {{{name}}} alone"
    if template.startswith("{turk_submit_to}"):
        rest = template[len("{turk_submit_to}"):]
        if not rest.startswith("/") or "{turk_submit_to}" in rest:
            return "must go on with a path after {turk_submit_to}, e.g. {turk_submit_to}/mturk/externalSubmit?" \
                   "assignmentId={assignment_id}&code={code}"
        return None
    parts = urlsplit(template)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"must be an http(s) URL, e.g. {COMPLETION_URL_EXAMPLE}"
    if "{" in parts.netloc or "}" in parts.netloc or "{turk_submit_to}" in template:
        return "must name its host itself (only {turk_submit_to} may stand for it, at the start)"
    return None


def check_common(values: dict) -> list[tuple[str, str]]:
    """Problems with the common options' values, as (field name, reason)."""
    template = values.get("completion_url")
    problem = completion_url_problem(template) if template else None
    problems = [("completion_url", problem)] if problem else []
    language = values.get("required_native_language")
    if language and languages.to_code(language) is None:
        problems.append(("required_native_language", "must be a language code (BCP 47: 2-3 letters, optionally "
                         "a 4-letter script and a region, e.g. en, pt-BR, zh-Hant) or a common English name"))
    return problems


#: The import options every protocol takes; each protocol adds its own (`own_options`).
COMMON_OPTIONS = (
    Option("redundancy", "int", None, "Distinct workers per HIT.", minimum=1, maximum=1000,
           default_text="1; post-edit 5 editors, reference-translation 5 translators (docs/methods.md §9)"),
    Option("seed", "int", None, "Random seed of the HIT layout; a random one is chosen and stored if empty.",
           minimum=0, maximum=2**62, default_text="random"),
    Option("source_language", "str", "", "Language code of the source, e.g. de.", max_length=16),
    Option("target_language", "str", "en", "Language code of the translations, e.g. en.", max_length=16),
    Option("statement", "text", "", "The question, in the target language; the protocol's default if empty.",
           max_length=2000),
    Option("instructions", "text", "", "Shown before the first item (Markdown)."),
    Option("instruction_judgment", "bool", None, "Ask judges, per translation, \"Did the translation follow the "
           "instructions? yes / partly / no\" (with an optional note) alongside the protocol's own answer; the "
           "instructions are the campaign file's `instructions` (docs/api.md#instructions).", target="options",
           default_text="no"),
    Option("hit_timeout_minutes", "int", 60, "An idle worker's HIT goes to someone else after this many minutes.",
           minimum=1, maximum=7 * 24 * 60),
    Option("require_media_played", "int", None, "Submit waits until the judge has played every video and audio of "
           "the item to at least this percentage (time actually played, not seeked over); the server refuses an "
           "answer that reports less (docs/api.md, \"Media actions\").", minimum=0, maximum=100, target="options",
           default_text="0"),
    Option("payment_per_hit", "decimal", Decimal("0"), "What a worker earns per HIT (for the cost figures).",
           minimum=Decimal("0"), maximum=Decimal("999999.99"), decimal_places=2),
    Option("completion_code", "str", "", "One code for every worker (e.g. Prolific's); random per HIT if empty.",
           max_length=64),
    Option("completion_url", "str", None, "Where a crowd worker who finishes a HIT is sent, with their code: an "
           f"http(s) URL with placeholders, e.g. {COMPLETION_URL_EXAMPLE} (Prolific) or {{turk_submit_to}}/mturk/"
           "externalSubmit?assignmentId={assignment_id}&code={code} (MTurk); the placeholders are "
           f"{placeholder_list()}. If empty, the code is only shown.",
           max_length=500),
    Option("require_qualification", "bool", False, "Ask crowd workers for their native language and country "
           "before their first HIT."),
    Option("required_native_language", "str", "", "Only workers whose declared native language matches this "
           "BCP 47 code may work: en accepts en, en-GB, en-US …; pt-BR accepts pt-BR only. A common English name "
           "(English, British English …) is stored as its code (docs/api.md §8.1).", max_length=64,
           store=lambda text: (languages.to_code(text) or text) if text else text),
    Option("require_signed_entry", "bool", None, "Crowd entry links must carry signature=<hex HMAC-SHA256 of "
           "'<campaign slug>:<worker id>' keyed with the campaign's entry secret>; a missing or wrong one is refused "
           "(403). Make the links with `manage.py sign_entry_link SLUG WORKER_ID` (docs/api.md §8.1)."),
    Option("entry_limits", "choice", None, "Crowd entry limits: crowd (per-address rate limit, at most "
           "CROWD_MAX_OPEN_HITS_PER_IP open HITs per address, a worker id bound to its browser) or lab (none of "
           "these, for a lab or class whose workers share one network address; docs/api.md §8.1).",
           choices=(("crowd", "crowd: per-address limits"), ("lab", "lab: no per-address limits")),
           default_text="crowd"),
    Option("study", "str", None, "The study (a group of campaigns judged by the same crowd) this campaign belongs "
           "to: the importer's own study of that name, or one shared with them, else a new one of theirs (never "
           "another researcher's). Workers' reliability is then tested over all of the study's campaigns.",
           max_length=200),
    Option("fetch_remote_media", "bool", None, "Fetch media whose src is an http(s) URL once at import and store "
           "them (within MEDIA_MAX_FILE_BYTES and MEDIA_FETCH_TIMEOUT); otherwise such a src refuses the file. "
           "Judges' browsers never load a third party (docs/api.md §2.1).", target="options", default_text="no"),
    Option("allow_item_navigation", "bool", None, "Whether a judge may go to items of a HIT other than the next "
           "one. Off: no item list or back navigation is shown, and an answer to any item but the next one is "
           "refused with 400 (on: 409 with the current state, as always; docs/api.md §8).", target="options",
           default_text="yes"),
    Option("publish", "bool", True, "Open the campaign to annotators at once; otherwise it stays a draft to "
           "preview and publish.", key="status", store=lambda publish: "active" if publish else "draft"),
)


#: Multi-stage tasks (docs/methods.md §9): one option, shared by every protocol with later stages.
EXCLUDE_OWN_WORK = Option(
    "exclude_own_work", "bool", True, "Keep a worker out of later-stage HITs that show their own work (verifying "
    "their own edit, judging their own translations, voting on their own questions, grading their own answers).",
    target="options")


#: The import options that change only how judgments are analysed, not how they are collected: the ones an
#: imported (analysis-only) campaign takes, by the names its protocol declares them under.
ANALYSIS_OPTIONS = frozenset({"statistics_preset", "qc_test", "qc_threshold", "threshold_rule", "reliability_scope",
                              "cluster_rule", "significance_test", "min_items", "mqm_weights",
                              "reference_as_system", "include_reference", "max_spam_miss_rate",
                              "bradley_terry_ties", "bradley_terry_runs"})
