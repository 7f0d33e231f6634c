"""Multi-stage tasks (docs/methods.md §9): a campaign whose protocol has later stages (post-editing → verification,
…) gets one campaign per later stage, linked by `Campaign.stage_input`. Each stage is a campaign of its own —
protocol, HITs, redundancy, pay, completion code, crowd link — so everything a campaign does (hand-out,
timeouts, pausing, progress, exports) works per stage.

A later stage starts without HITs. Its HITs are built from the accepted output of its input stage as that
output arrives: after each stored judgment of a stage with later stages (`judgments_recorded`, through
`annotation.tasks.build_stages`) and on a researcher's request (`build_stages`, the API and the admin). The
stage's protocol says what is ready (`Protocol.plan_stage`); the builder numbers and stores the new HITs under a
lock on the stage's row, so two workers racing to build the same stage build each HIT once. A stage reads only
its own input stage's judgments.

Follow-up stages are found with `next_stages_of(campaign)`; a stage's input with `campaign.stage_input`.
"""
from __future__ import annotations

from django.db import transaction
from django.db.models import Count, Max, Q

from ..building.bulk import insert
from ..building.campaign_files import unique_slug
from ..building.stage_specs import StagePlan, StageSpec
from ..models import Assignment, Campaign, Hit, HitItem, Judgment
from .progress import campaign_counts

__all__ = ["FIRST_STAGE", "StagePlan", "StageSpec", "StagesRefused", "add_stages", "build_stage",
           "build_stages", "create_stages", "first_stage", "input_complete",
           "next_stages_of", "stage_progress", "task_campaign_ids", "task_judgments", "task_stages"]


#: The name of a task's first stage whose protocol names none (error spans, whose review stage is optional).
FIRST_STAGE = "annotate"


def create_stages(campaign: Campaign) -> list[Campaign]:
    """The campaign's later stages, created empty (no HITs yet) with the settings the protocol gives them; each
    fed by the stage its spec names (`StageSpec.input`), the first stage by default, so stages can chain. Each
    stage shows the researcher's instructions unless its spec gives it its own, and starts in the first stage's
    status (the task is one unit: services/lifecycle.py). A stage whose spec says `build_at_once` gets its HITs
    at once."""
    created: dict[str, Campaign] = {}
    specs = campaign.protocol_spec.next_stages(campaign.options or {})
    if specs and not campaign.stage_name:  # a task's first stage is named, so that `task_campaign_ids` finds the rest
        campaign.stage_name = campaign.protocol_spec.stage_name or FIRST_STAGE
        campaign.save(update_fields=["stage_name"])
    for spec in specs:
        name = f"{campaign.name} — {spec.name}"[:200]
        source = campaign if spec.input is None else created[spec.input]
        created[spec.name] = (Campaign.objects.create(
            name=name, slug=unique_slug(name), protocol=spec.protocol, stage_input=source, stage_name=spec.name,
            status=campaign.status, source_language=campaign.source_language,
            target_language=campaign.target_language, redundancy=spec.redundancy, hit_size=spec.hit_size,
            seed=campaign.seed, payment_per_hit=spec.payment_per_hit, options=spec.options, owner=campaign.owner,
            study=campaign.study, completion_url=campaign.completion_url,
            require_signed_entry=campaign.require_signed_entry, entry_limits=campaign.entry_limits,
            hit_timeout_minutes=campaign.hit_timeout_minutes,
            require_qualification=campaign.require_qualification, instructions=spec.instructions or
            campaign.instructions, required_native_language=campaign.required_native_language))
        if spec.build_at_once:
            build_stage(created[spec.name])
    return list(created.values())


class StagesRefused(ValueError):
    """Later stages cannot be added to this campaign; the message says why."""


def add_stages(campaign: Campaign, given: dict) -> list[Campaign]:
    """Later stages for a campaign made without them, such as the review stage of an imported file's MQM or ESA
    judgments (docs/api.md, "Review of error spans"): the stage options in `given` are checked as the protocol's
    import checks them (OptionError names each bad one) and stored with the campaign's options; the stages the
    protocol then declares are created open (an analysis-only campaign's have nothing else to wait for) and built
    from the output there is. Refused (StagesRefused) when the campaign already feeds a stage or the options ask
    for none; nothing changes then."""
    spec = campaign.protocol_spec
    names = {option.name for option in spec.own_options if option.target == "options"}
    unknown = sorted(set(given) - names)
    if unknown:
        raise StagesRefused(f"{unknown[0][:40]!r} is not an option of protocol {spec.name}")
    parsed = spec.parse_options(given)
    options = {**(campaign.options or {}), **{k: v for k, v in parsed.options.items() if k in given}}
    spec.check_options(options, set(), campaign.hit_size)
    if Campaign.objects.filter(stage_input=campaign).exists():
        raise StagesRefused("this campaign already feeds a later stage")
    if spec.stage_only or not spec.next_stages(options):
        raise StagesRefused(f"protocol {spec.name} declares no later stage for these options")
    with transaction.atomic():
        campaign.options = options
        campaign.save(update_fields=["options"])
        created = create_stages(campaign)
        Campaign.objects.filter(pk__in=[stage.pk for stage in created]).update(status=Campaign.Status.ACTIVE)
        for stage in created:
            stage.status = Campaign.Status.ACTIVE
            build_stage(stage)
    return created


def first_stage(campaign: Campaign) -> Campaign:
    """The task's first stage (the imported campaign), where its results are stored; the campaign itself when it
    is one."""
    while campaign.stage_input_id is not None:
        campaign = campaign.stage_input
    return campaign


def next_stages_of(campaign: Campaign) -> list[Campaign]:
    return list(Campaign.objects.filter(stage_input=campaign).order_by("pk"))


def task_stages(campaign: Campaign) -> list[Campaign]:
    """Every stage of the task `campaign` belongs to, first stage first, each after the stage feeding it; [the
    campaign] for a one-stage campaign."""
    stages, frontier = [first_stage(campaign)], [first_stage(campaign)]
    while frontier:
        frontier = list(Campaign.objects.filter(stage_input__in=frontier).order_by("pk"))
        stages += frontier
    return stages


def task_campaign_ids(campaign: Campaign) -> list[int]:
    """The ids of every stage of the task `campaign` belongs to; [its id] for a one-stage campaign, without a query
    (a campaign with later stages carries a `stage_name`, set when they are created)."""
    if campaign.stage_input_id is None and not campaign.stage_name:
        return [campaign.pk]
    return [stage.pk for stage in task_stages(campaign)]


def task_judgments(campaign: Campaign):
    """Every judgment of the task `campaign` belongs to, every stage's (the campaign's own for a one-stage one): what
    a task's results page counts, in its "over N judgments" and its progress chart alike (docs/api.md §6)."""
    ids = task_campaign_ids(campaign)
    return Judgment.objects.filter(campaign_id=ids[0]) if len(ids) == 1 else Judgment.objects.filter(
        campaign_id__in=ids)


def _progress(campaign: Campaign) -> tuple[int, int, int]:
    """The stage's HITs, its finished assignments and its HITs done (by as many workers as its redundancy asks),
    from one grouped query."""
    per_hit = list(Hit.objects.filter(campaign=campaign).order_by()
                   .annotate(done=Count("assignments", filter=Q(assignments__status=Assignment.Status.COMPLETED)))
                   .values_list("done", flat=True))
    return len(per_hit), sum(per_hit), sum(done >= campaign.redundancy for done in per_hit)


def input_complete(campaign: Campaign) -> bool:
    """Whether every HIT of the stage has been done by as many workers as its redundancy asks (a HIT more workers
    finished than asked does not make up for one fewer finished)."""
    hits, _, hits_done = _progress(campaign)
    return hits > 0 and hits_done == hits


def build_stages(campaign: Campaign) -> dict[str, int]:
    """Build what is ready of every stage fed by `campaign`; {stage slug: new HITs}."""
    return {stage.slug: build_stage(stage) for stage in next_stages_of(campaign)}


def build_stage(stage: Campaign) -> int:
    """Add the HITs of `stage` that its input's output makes ready; the number of new HITs. Holds the stage's row
    lock while planning and storing, so concurrent builders (two Celery workers) build each HIT once."""
    source = stage.stage_input
    if source is None:
        return 0
    with transaction.atomic():
        stage = Campaign.objects.select_for_update().get(pk=stage.pk)
        plan = stage.protocol_spec.plan_stage(stage, source, input_complete(source))
        if not plan.hits:
            return 0
        first = (Hit.objects.filter(campaign=stage).aggregate(m=Max("number"))["m"] or 0) + 1
        hit_pks = insert(Hit, ["campaign_id", "number", "size", "exposure"],
                         [(stage.pk, first + n, len(items), exposure) for n, (items, exposure) in enumerate(plan.hits)])
        insert(HitItem, ["hit_id", "position", "set_index", "item_type", "segment_id", "output_id", "text",
                         "partner_position", "payload"],
               [(hit, p.position, p.set_index, p.item_type, p.segment_id, p.output_id, p.text, p.partner_position,
                 p.payload) for hit, (items, _) in zip(hit_pks, plan.hits, strict=True) for p in items],
               return_ids=False)
        return len(plan.hits)


def stage_progress(campaign: Campaign) -> list[dict]:
    """Every stage of the task `campaign` belongs to, in order, with its status, HITs (all, and done by as many
    workers as asked, and the percentage done: HITs done × redundancy of HITs × redundancy, as the campaign's
    progress counts them), places done of all (HITs × redundancy; a HIT's finished assignments up to the
    redundancy), finished assignments (and those needed) and what it waits for (for the admin's pipeline,
    the results pages and the API)."""
    stages = task_stages(campaign)
    if len(stages) == 1:
        return []
    by_pk = {stage.pk: stage for stage in stages}
    counts = campaign_counts(stages)  # three grouped queries for every stage
    rows = []
    for stage in stages:
        count = counts[stage.pk]
        hits, done, hits_done = count["hits_total"], count["assignments_done"], count["hits_done"]
        complete = hits > 0 and hits_done == hits
        source = by_pk.get(stage.stage_input_id)
        if complete:
            waiting = None
        elif source is not None and not hits:
            waiting = f"output of {source.stage_name or 'the first stage'}"
        else:
            waiting = "workers"
        rows.append({"stage": stage.stage_name or stage.protocol_spec.stage_name, "campaign": stage.slug,
                     "id": stage.pk, "status": stage.status,
                     # HITs done × redundancy of HITs × redundancy, as the campaign's progress counts elsewhere
                     "hits_done": hits_done, "percent": round(100 * hits_done / hits) if hits else 0,
                     "protocol": stage.protocol, "redundancy": stage.redundancy, "hits": hits,
                     "assignments_done": done, "assignments_needed": hits * stage.redundancy,
                     # places (HITs × redundancy), as the campaign page and the campaign list count them
                     "places_done": count["places_done"], "places_total": count["places_total"],
                     "complete": complete, "waiting_for": waiting, "input": source.slug if source else None})
    return rows
