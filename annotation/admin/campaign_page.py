"""What the campaign page shows beside its settings: links, the statistical conventions in force, capacity, size
warnings and the preview's summary and text blocks (annotation/admin/campaigns.py)."""

from collections import Counter

from django.db.models import Count, Exists, OuterRef
from django.urls import NoReverseMatch, reverse

from ..models import (
    Annotator,
    Assignment,
    Campaign,
    HitItem,
    ItemType,
)
from ..ownership import is_superuser
from ..services.reliability_capacity import (
    ReliabilityCapacity,
    reliability_capacity,
)

#: The item payload keys the preview shows, in order, as (key, label, gray): gray is context read first. A screen of
#: several translations (`candidates`: ranking, contrastive ESA, MQM-SxS, constituent acceptance) shows each under its
#: key after these, as the screen shows them side by side. A question (reading comprehension's vote and grade screens)
#: is a text or {"question", "answer"}; a list of them shows one a line.
SHOWN = (("reference", "", True), ("source", "", True), ("article", "", True), ("candidate", "", False),
         ("outputs", "", False), ("A", "A", False), ("B", "B", False), ("question", "Question", False),
         ("questions", "Questions", False), ("sample_answer", "Sample answer", False),
         ("answer", "Given answer", False), ("others", "Other questions", True))
#: The payload key of a text's highlighted phrase ([start, end) in code points, as hit.js's fillText marks it).
SPAN_OF = {"source": "source_span"}

#: The preview's summary line in a researcher's words, by item type: (one, many). These are the researcher's words
#: only: an annotator's page never names an item's type (docs/api.md §8.2).
ITEM_PURPOSES = {
    "system": ("translation to judge", "translations to judge"),
    "bad_ref": ("bad-reference check", "bad-reference checks"),
    "repeat": ("repeat check", "repeat checks"),
    "reference": ("human reference (control)", "human references (control)"),
    "spam": ("spam check", "spam checks"),
    "gold": ("gold check", "gold checks"),
    "tutorial": ("practice item", "practice items"),
}
#: Payload keys of translations shown side by side: an item with two or more of them is one comparison.
COMPARED = frozenset({"A", "B", "candidates"})


def item_summary(rows: list[dict]) -> list[tuple[str, str]]:
    """The preview's summary of one HIT, as (item type, words) per kind of item, the most frequent first: "70
    translations to judge", "10 bad-reference checks". An item of several translations side by side (pairwise,
    ranking) is a comparison to judge; an item that shows no system output is called what its screen shows (the
    preview's Type column: reference translation's "4 screens of sentences to translate")."""
    counts: Counter = Counter()
    for row in rows:
        item = row["item"]
        one, many = ITEM_PURPOSES.get(item.item_type, (item.item_type, item.item_type))
        if item.item_type == "system" and row["type"] != item.get_item_type_display():
            one, many = f"screen of {row['type'].lower()}", f"screens of {row['type'].lower()}"
        elif item.item_type == "system" and sum(block["key"] in COMPARED for block in row["blocks"]) > 1:
            one, many = "comparison to judge", "comparisons to judge"
        counts[(item.item_type, one, many)] += 1
    return [(kind, f"{n} {one if n == 1 else many}") for (kind, one, many), n in counts.most_common()]


def _url(name: str, fallback: str, **kwargs) -> str:
    """A route of another app by name, or its documented path if that app is not installed here."""
    try:
        return reverse(name, kwargs=kwargs)
    except NoReverseMatch:
        return fallback


def campaign_links(request, campaign: Campaign) -> dict:
    """The annotators' (crowd) link, absolute as the API's `crowd_link`, the results page and the API detail."""
    crowd = reverse("annotation:crowd-start", args=[campaign.slug]) + "?worker_id="
    return {
        "crowd": None if campaign.analysis_only else request.build_absolute_uri(crowd),
        "results": _url("results:campaign", f"/results/{campaign.slug}/", slug=campaign.slug),
        "api": _url("campaign-detail", f"/api/campaigns/{campaign.slug}/", slug=campaign.slug),
        "settings": _url("campaign-settings-file", f"/api/campaigns/{campaign.slug}/settings/", slug=campaign.slug)
        + "?format=json",
    }


def capacity_of(campaign: Campaign) -> ReliabilityCapacity | None:
    """The stored campaign's quality-control capacity (see `reliability_capacity`), from its HITs' bad references."""
    per_hit = (HitItem.objects.filter(hit__campaign=campaign, item_type=ItemType.BAD_REF)
               .values("hit_id").annotate(n=Count("pk")).order_by().values_list("n", flat=True))
    pairs = list(per_hit)
    hits = campaign.hits.count()
    if len(pairs) < hits:  # a HIT without bad references
        pairs += [0] * (hits - len(pairs))
    return reliability_capacity(campaign.protocol_spec, qc_test=campaign.qc_test, qc_threshold=campaign.qc_threshold,
                                options=campaign.options or {}, bad_pairs_per_hit=pairs,
                                in_study=campaign.study_id is not None)


#: The statistical conventions the preview states, by option name: label. Each is shown when the campaign's protocol
#: declares that option (`option_fields`), so every family states the conventions that apply to it, from the one
#: declaration of options (stored at import, defaults resolved).
CONVENTIONS = (("statistics_preset", "preset"), ("qc_test", "test"), ("qc_threshold", "α"),
               ("threshold_rule", "rule"), ("reliability_scope", "scope"), ("cluster_rule", "clusters"),
               ("significance_test", "significance"), ("min_items", "min items"), ("min_gold", "min gold"),
               ("min_gold_accuracy", "gold accuracy"), ("max_spam_miss_rate", "max spam missed"),
               ("vote_threshold", "vote threshold"), ("flag_threshold", "flag threshold"), ("gate", "gate"))
RULE_TEXT = {"lt": "reliable when p < α", "le": "reliable when p ≤ α"}


def option_value(campaign: Campaign, option):
    """The value an option stored at import: a Campaign field or a (possibly nested) key of `options`."""
    key = option.key or option.name
    if option.target == "campaign":
        return getattr(campaign, key, None)
    value = campaign.options or {}
    for part in (key,) if isinstance(key, str) else key:
        value = value.get(part) if isinstance(value, dict) else None
    return value


def conventions_shown(campaign: Campaign) -> list[tuple[str, str]]:
    """The campaign's statistical conventions as the preview shows them before Publish: (label, value) for each
    that its protocol takes (none: the preview says the protocol has no reliability test or clusters)."""
    taken = {option.name: option for option in campaign.protocol_spec.option_fields()}
    shown = []
    for name, label in CONVENTIONS:
        value = option_value(campaign, taken[name]) if name in taken else None
        if value is None:
            continue
        if name == "threshold_rule":
            value = RULE_TEXT.get(value, value)
        elif isinstance(value, bool):
            value = "on" if value else "off"
        shown.append((label, f"{value:g}" if isinstance(value, float) else str(value)))
    return shown


def size_warnings_of(campaign: Campaign) -> list[str]:
    """What the stored HITs do differently from the options (`Protocol.size_warnings`), as at import."""
    sizes = list(campaign.hits.values_list("size", flat=True))
    return campaign.protocol_spec.size_warnings(campaign.options or {}, campaign.systems.count(), campaign.hit_size,
                                                sizes)


def preview_systems(protocol, item, options: dict) -> str:
    """The System column of the preview: the protocol's `preview_systems` (by default the system of the item's
    output; pairwise: which system is on side A and which on B)."""
    return protocol.preview_systems(item, options)


def highlighted(text, span=None) -> dict:
    """One line of the preview: the text cut at its highlighted phrase (constituent protocols: `[start, end)` in
    code points, which Python's str counts as the screen's Array.from does); an unusable span highlights nothing,
    as on the screen."""
    text = str(text)
    if not (isinstance(span, (list, tuple)) and len(span) == 2 and all(isinstance(n, int) for n in span)
            and 0 <= span[0] < span[1] <= len(text)):
        return {"before": text, "marked": "", "after": ""}
    return {"before": text[:span[0]], "marked": text[span[0]:span[1]], "after": text[span[1]:]}


def _question_text(value) -> str:
    return str(value.get("question", "")) if isinstance(value, dict) else str(value)


def text_blocks(shown: dict) -> list[dict]:
    """What the annotator sees, as blocks of lines (a pairwise item's sides hold one sentence a line; each of a
    screen's candidates is a block under its key), each line with its highlighted phrase (`highlighted`)."""
    blocks = []
    for key, label, gray in SHOWN:
        value = shown.get(key)
        if value in (None, "", []):
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        lines = [highlighted(_question_text(v), shown.get(SPAN_OF.get(key, ""))) for v in values]
        blocks.append({"key": key, "label": label, "gray": gray, "lines": lines})
        if key == "question" and isinstance(value, dict) and value.get("answer"):  # the vote screen's sample answer
            blocks.append({"key": "sample_answer", "label": "Sample answer", "gray": False,
                           "lines": [highlighted(value["answer"])]})
    for candidate in shown.get("candidates") or ():
        blocks.append({"key": "candidates", "label": str(candidate.get("key", "")), "gray": False,
                       "lines": [highlighted(candidate.get("text", ""), candidate.get("span"))]})
    return blocks

def visible_annotators(user):
    """Workers seen in the user's campaigns (who worked in one, or are blocked from one); superusers: all."""
    if is_superuser(user):
        return Annotator.objects.all()
    campaigns = Campaign.objects.visible_to(user).values("pk")
    worked = Assignment.objects.filter(annotator_id=OuterRef("pk"), campaign_id__in=campaigns)
    blocked = Campaign.blocked_annotators.through.objects.filter(annotator_id=OuterRef("pk"),
                                                                  campaign_id__in=campaigns)
    return Annotator.objects.filter(Exists(worked) | Exists(blocked))
