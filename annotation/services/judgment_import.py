"""Import of judgments collected elsewhere into analysis-only campaigns (docs/api.md,
"Judgments collected elsewhere"), so published evaluations can be re-analysed with the
same statistics and API. The whole file is validated first; then everything is written in
one transaction with bulk inserts (COPY on PostgreSQL).

The formats are declared by the protocol packages that read them (`Protocol.judgment_formats`, a
`building.judgment_files.JudgmentFormat` each); `JUDGMENT_FORMATS` offers those of the registered protocols.
"""
from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping

from django.db import transaction

from config.registry import LiveMapping

from ..building.campaign_files import CampaignFileError
from ..building.judgment_files import JudgmentFormat, JudgmentImportResult
from ..building.shared_options import RELIABILITY_OPTIONS
from ..protocols import UnknownProtocol, declared_objects, get_protocol
from ..protocols.options import OptionError, is_blank, parse
from .campaign_options import apply_options, parse_change

#: The reliability statistics' options, whose defaults follow the statistics preset.
RELIABILITY_NAMES = {o.name for o in RELIABILITY_OPTIONS}


def judgment_formats() -> dict[str, JudgmentFormat]:
    """Every judgment format the registered protocols declare (`Protocol.judgment_formats`), by name, in the order
    they are listed in (`JudgmentFormat.listed`, then the protocols' order); a path that names no format, or one
    name declared as two different formats, is a configuration error."""
    declared = declared_objects("judgment_formats", JudgmentFormat, "judgment format")
    return dict(sorted(declared.items(), key=lambda item: item[1].listed))


def format_text_options() -> dict[str, str]:
    """The formats' plain-text options (name -> help, e.g. "pair: wmt-rank: …; mqm-tsv, esa-jsonl: …."), one help
    naming every format that takes the option, formats that give it the same help together."""
    helps: dict[str, dict[str, list[str]]] = {}
    for fmt in judgment_formats().values():
        for option, text in fmt.text_options.items():
            helps.setdefault(option, {}).setdefault(text, []).append(fmt.name)
    return {option: "; ".join(f"{', '.join(names)}: {text}" for text, names in by_text.items()) + "."
            for option, by_text in helps.items()}


#: Format name -> its parser, from lines to `ParsedJudgments`.
JUDGMENT_FORMATS: Mapping = LiveMapping(lambda: {name: fmt.parser for name, fmt in judgment_formats().items()})
#: Format options passed as plain text, by the command (--rows) and the API (field `rows`) alike: name -> help.
FORMAT_TEXT_OPTIONS: Mapping = LiveMapping(format_text_options)


def import_judgments(lines: Iterable[bytes | str], *, fmt: str, name: str, study: str | None = None, owner=None,
                     analysis: Mapping[str, object] | None = None, **format_options) -> JudgmentImportResult:
    """Validate a file of external judgments and store it as an analysis-only campaign (in `study`, if named),
    owned by `owner` (a user, or None), who also owns the study when this import creates it. `analysis`: raw
    values of the protocol's statistics options (`Protocol.analysis_options`); a bad one refuses the import. A
    file of several tasks (wmt-rank without `pair`) is read once and makes one campaign per task, in one
    transaction: the result is the first's, and `result.campaigns` lists every one (one result a campaign)."""
    parser = JUDGMENT_FORMATS.get(fmt)
    if parser is None:
        raise CampaignFileError([(0, f"unknown format {fmt!r}; one of: {', '.join(JUDGMENT_FORMATS)}")])
    if not name or not name.strip():
        raise CampaignFileError([(0, "the campaign needs a name")])
    accepted = set(inspect.signature(parser).parameters) - {"lines"}
    unknown = sorted(set(format_options) - accepted)
    if unknown:
        raise CampaignFileError([(0, f"format {fmt} does not take: {', '.join(unknown)}")])
    parsed = parser(lines, **format_options)
    tasks = parsed if isinstance(parsed, list) else [parsed]
    for one in tasks:
        try:
            get_protocol(one.protocol)
        except UnknownProtocol as exc:
            raise CampaignFileError([(0, str(exc))]) from None
    analysis = {k: v for k, v in (analysis or {}).items() if not is_blank(v)}
    try:
        for one in tasks:
            get_protocol(one.protocol).parse_analysis_options(analysis)
    except OptionError as exc:
        raise CampaignFileError([(0, f"{option}: {reason}") for option, reason in exc.errors]) from None
    if study is not None and (not isinstance(study, str) or len(study) > 200 or "\x00" in study):
        raise CampaignFileError([(0, "study: a name of at most 200 characters")])
    results = []
    with transaction.atomic():
        for one in tasks:
            # a file of several tasks (wmt-rank) makes a campaign each, "NAME TASK", all or none of them
            title = name.strip() if len(tasks) == 1 else f"{name.strip()} {one.options.get('pair', '')}"[:200]
            result = one.store(title, study, owner)
            _preset_reliability(result.campaign)
            if analysis:
                apply_options(result.campaign, parse_change(result.campaign, analysis))
            result.warnings = list(one.warnings)
            results.append(result)
    results[0].campaigns = results
    return results[0]


def imported_answer(result: JudgmentImportResult) -> dict:
    """What the command, the API and a background job answer: {campaign, judgments, warnings?}, and for a file
    of several tasks `campaigns`, the same for every campaign made (with its task, `pair`)."""
    def one(r):
        return {"campaign": r.campaign.slug, "judgments": r.judgments, **({"warnings": r.warnings} if r.warnings
                                                                             else {})}
    answer = one(result)
    if len(result.campaigns) > 1:
        answer["campaigns"] = [{**one(r), "pair": (r.campaign.options or {}).get("pair")} for r in result.campaigns]
    return answer


def _preset_reliability(campaign) -> None:
    """Give an imported campaign the reliability test and threshold its statistics preset names (the defaults a
    campaign import computes from the options), not the model's `paired-t`: error-span presets test workers with
    Wilcoxon (docs/methods.md §11.2)."""
    spec = get_protocol(campaign.protocol)
    fields = [o for o in spec.option_fields() if o.name in RELIABILITY_NAMES]
    if not any(o.name == "qc_test" for o in fields):
        return
    preset = (campaign.options or {}).get("statistics_preset")
    chosen = parse(campaign.protocol, fields, {"statistics_preset": preset} if preset else {}).campaign_fields
    changed = {k: v for k, v in chosen.items() if k in ("qc_test", "qc_threshold") and v is not None
               and getattr(campaign, k) != v}
    if changed:
        for key, value in changed.items():
            setattr(campaign, key, value)
        campaign.save(update_fields=list(changed))


