"""Server-rendered annotator pages: crowd entry, in-house list, the rating page."""
from django import forms
from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from ..models import Assignment, Campaign
from ..protocols.base import is_rtl
from ..services import assignment as assigning
from ..services.judging import CLOSED_TEXT

#: How long the done screen shows the code before it goes on to the campaign's completion URL.
COMPLETION_REDIRECT_MS = 4000


def _message(request, title: str, text: str, status: int = 200):
    return render(request, "annotation/message.html", {"title": title, "text": text}, status=status)


def _finished(request, title: str, text: str, done: list[Assignment], entry: dict | None, status: int = 200):
    """A message with the worker's completion codes (each once) and where to submit them: the completion URL,
    from this visit's start link, completed by what the link the HIT was done under carried."""
    codes, seen = [], set()
    for assignment in done:
        if assignment.completion_code in seen:
            continue
        seen.add(assignment.completion_code)
        link = assignment.campaign.completion_link(assignment.completion_code, {**assignment.entry, **(entry or {})})
        codes.append({"code": assignment.completion_code, "url": link})
    return render(request, "annotation/finished.html", {"title": title, "text": text, "codes": codes},
                  status=status)


def _not_open(request, campaign: Campaign, annotator, entry: dict | None):
    done = assigning.finished(campaign, annotator)
    if campaign.status == Campaign.Status.CLOSED:
        title, text = "Campaign closed", ("This campaign has closed and is not accepting annotators any more; "
                                          "your judgments are saved.")
    elif campaign.status == Campaign.Status.PAUSED:
        title, text = "Paused", ("This campaign is paused and not accepting annotators at the moment; your work so "
                                 "far is saved. Come back later.")
    else:
        return _message(request, "Not open", "This campaign is not accepting annotators at the moment.", 403)
    if done:
        return _finished(request, title, text, done, entry, 403)
    return _message(request, title, text, 403)


def _open_campaign(slug: str) -> Campaign:
    campaign = get_object_or_404(Campaign, slug=slug, analysis_only=False)
    return campaign


def _hand_out(request, campaign: Campaign, annotator, entry: dict | None = None):
    if not campaign.accepts_annotators:
        return _not_open(request, campaign, annotator, entry)
    if assigning.is_blocked(campaign, annotator):
        return _message(request, "Not available", "You can no longer work on this campaign.", 403)
    if not assigning.qualifies(campaign, annotator):
        return _message(request, "Thank you", "This campaign is for native speakers of "
                        f"{campaign.required_native_language} only.", 403)
    try:
        assignment = assigning.assign(campaign, annotator, entry)
    except assigning.NoHitAvailable:
        done = assigning.finished(campaign, annotator)
        if done:
            return _finished(request, "Thank you", "You have finished your work in this campaign: there is no more "
                             "work for you right now.", done, entry)
        return _message(request, "Thank you", "There is no more work for you in this campaign right now.")
    return redirect("annotation:hit", token=assignment.token)


class QualificationForm(forms.Form):
    native_language = forms.CharField(max_length=64, label="Your native language")
    country = forms.CharField(max_length=64, label="The country you live in")


def crowd_start(request, slug: str):
    """`/c/<slug>/start/?worker_id=W` (or PROLIFIC_PID, workerId): to the worker's HIT."""
    campaign = _open_campaign(slug)
    try:
        worker = assigning.worker_from_query(request.GET)
    except assigning.InvalidWorkerId as exc:
        return _message(request, "Invalid worker id", str(exc), 400)
    if worker is None:
        return render(request, "annotation/start.html", {"campaign": campaign})
    annotator = assigning.crowd_annotator(*worker)
    entry = assigning.entry_from_query(request.GET, worker[0])
    if campaign.accepts_annotators and assigning.needs_qualification(campaign, annotator):
        form = QualificationForm(request.POST or None)
        if request.method != "POST" or not form.is_valid():
            return render(request, "annotation/qualification.html", {"campaign": campaign, "form": form})
        annotator.native_language = form.cleaned_data["native_language"]
        annotator.country = form.cleaned_data["country"]
        annotator.save(update_fields=["native_language", "country"])
    return _hand_out(request, campaign, annotator, entry)


def campaigns_for(user):
    campaigns = Campaign.objects.filter(status=Campaign.Status.ACTIVE, analysis_only=False)
    if user.is_staff:
        return campaigns
    return campaigns.filter(Q(in_house_annotators=user) | Q(in_house_annotators__isnull=True)).distinct()


@login_required
def annotate(request):
    """In-house annotators' list of campaigns, with their progress."""
    annotator = assigning.user_annotator(request.user)
    campaigns = list(campaigns_for(request.user))
    mine = {}
    for a in Assignment.objects.filter(annotator=annotator, campaign__in=campaigns).select_related("hit"):
        entry = mine.setdefault(a.campaign_id, {"done": 0, "active": None})
        if a.status == Assignment.Status.COMPLETED:
            entry["done"] += 1
        elif a.status == Assignment.Status.ACTIVE:
            entry["active"] = a
    rows = [{"campaign": c, **mine.get(c.pk, {"done": 0, "active": None})} for c in campaigns]
    return render(request, "annotation/annotate.html", {"rows": rows})


@login_required
@require_POST
def annotate_start(request, slug: str):
    campaign = _open_campaign(slug)
    if not campaigns_for(request.user).filter(pk=campaign.pk).exists():
        raise Http404
    return _hand_out(request, campaign, assigning.user_annotator(request.user))


def hit_page(request, token: str):
    """The rating page; the screen then talks to the JSON API with the same token."""
    assignment = get_object_or_404(Assignment.objects.select_related("campaign"), token=token)
    campaign = assignment.campaign
    if campaign.status == Campaign.Status.CLOSED and assignment.status != Assignment.Status.COMPLETED:
        return _message(request, "Campaign closed", CLOSED_TEXT, 410)
    if assignment.status == Assignment.Status.ABANDONED:
        return _message(request, "HIT expired", "You were idle too long and this HIT went to another worker. "
                        "Start again from the campaign link to get a new one.", 410)
    protocol = campaign.protocol_spec
    config = {
        "api": f"/api/hit/{token}/",
        "family": protocol.family,
        "completion_redirect_ms": COMPLETION_REDIRECT_MS,
    }
    return render(request, "annotation/hit.html", {
        "campaign": campaign, "protocol": protocol, "config": config,
        "target_dir": "rtl" if is_rtl(campaign.target_language) else "ltr",
        "source_dir": "rtl" if is_rtl(campaign.source_language or "") else "ltr",
        "statement": campaign.effective_statement,
    })
