"""Server-rendered annotator pages: crowd entry, in-house list, the rating page."""
import ipaddress
import logging
import secrets

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST
from django_ratelimit.core import get_usage

from .. import languages
from ..extensions import outcome_codes
from ..models import Assignment, Campaign
from ..protocols.base import is_rtl
from ..services import assignment as assigning
from ..services import trials
from ..services.judging import CLOSED_TEXT, navigation_allowed
from ..services.stages import input_complete

logger = logging.getLogger(__name__)

#: How long the done screen shows the code before it goes on to the campaign's completion URL.
COMPLETION_REDIRECT_MS = 4000
#: The crowd entry cookie that binds a worker's HIT to their browser (Assignment.browser_key).
BROWSER_COOKIE = "mteval_browser"
BROWSER_COOKIE_AGE = 365 * 24 * 60 * 60


def _message(request, title: str, text: str, status: int = 200, again: bool = False):
    """A message page; `again` adds a link to try the same address again."""
    context = {"title": title, "text": text, "again": request.get_full_path() if again else ""}
    return render(request, "annotation/message.html", context, status=status)


def _ended(request, campaign: Campaign, outcome: str, title: str, text: str, entry: dict | None, status: int):
    """A message for a worker whose HIT ended unfinished (`outcome`: "gated" or "timed_out"), with the code a crowd
    market maps to that outcome when one is installed (annotation.extensions.OutcomeCodes), else the message alone."""
    code = outcome_codes().code_for(campaign, outcome) if entry else None
    if not code:
        return _message(request, title, text, status)
    return render(request, "annotation/finished.html", {
        "title": title, "text": text, "codes": [{"code": code, "url": campaign.completion_link(code, entry)}]},
        status=status)


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


def _not_open(request, campaign: Campaign, annotator, entry: dict | None, browser: str | None, mine):
    done = assigning.finished(campaign, annotator, browser, mine)
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


def _in_use(request, campaign: Campaign):
    """The one answer to a browser presenting a worker id that another browser holds (docs/api.md §8.1): the same
    whether that browser has an open HIT or finished ones, and nothing of the worker's in it."""
    return _message(request, "This link is in use in another browser", "This worker id is already in use in this "
                    "campaign in another browser. If this is you, please go on in the browser where you started: "
                    "your HIT and your completion codes are there. If you cleared your cookies or changed browser, "
                    "this link works in this browser once it has been left unused for "
                    f"{campaign.hit_timeout_minutes} minutes, and your judgments so far are kept (a completion code "
                    "is shown only in the browser where its HIT was finished). Otherwise, please contact the "
                    f"researcher. {LAB_HINT}", 409, again=True)


#: What a worker refused by a per-address limit or the browser binding is told the researcher can change, and what a
#: researcher trying their own campaign can do instead (docs/api.md §8.1).
LAB_HINT = ("If you are in a lab or class behind one network, ask the researcher to switch this campaign to lab "
            "limits. Researchers trying their own campaign: use “Try as a worker” on the admin page of the campaign "
            "(each try is a fresh test worker, without these limits), or set its “Entry limits” to lab there.")


@login_required
@require_POST
def try_as_worker(request, slug: str):
    """`POST /c/<slug>/try/`: the campaign's owner enters it as a fresh test worker (services/trials.py), a draft
    too, without the crowd limits; anyone else gets 404, as for a campaign they cannot see."""
    campaign = get_object_or_404(Campaign, slug=slug, analysis_only=False)
    if not trials.may_try(request.user, campaign):
        raise Http404
    if not trials.triable(campaign):
        return _message(request, "Not open", f"This campaign is {campaign.get_status_display().lower()}: it hands "
                        "out no HIT, to a trial either. Publish it (or leave it a draft) to try it.", 403)
    try:
        assignment = assigning.assign(campaign, trials.trial_worker(request.user, campaign))
    except assigning.NoHitAvailable:
        return _message(request, "Nothing to try", "This campaign has no HIT to hand out now (a later stage waits for "
                        "the output of the stage before it; or every HIT has all the workers it asks for).", 409)
    return redirect("annotation:hit", token=assignment.token)


def _open_campaign(slug: str) -> Campaign:
    campaign = get_object_or_404(Campaign, slug=slug, analysis_only=False)
    return campaign


def _hand_out(request, campaign: Campaign, annotator, entry: dict | None = None, *, crowd: bool = False,
              browser: str | None = None, mine=None):
    """To the annotator's HIT, or a page saying why there is none. Crowd workers: `browser` binds the worker id
    (None when CROWD_BIND_BROWSER is off), and CROWD_MAX_OPEN_HITS_PER_IP applies. `mine`: the worker's HITs
    of the campaign (assigning.worker_assignments), when the caller has them."""
    mine = assigning.worker_assignments(campaign, annotator) if mine is None else mine
    if not campaign.accepts_annotators:
        return _not_open(request, campaign, annotator, entry, browser, mine)
    if assigning.is_blocked(campaign, annotator):  # blocked by hand or by the live reliability gate
        done = assigning.finished(campaign, annotator, browser, mine)
        if done:
            return _finished(request, "Thank you", "Thank you for your work. There are no further HITs for you in "
                             "this campaign. Your work so far is recorded; the completion codes of the HITs you "
                             "finished are below.", done, entry, 403)
        return _ended(request, campaign, "gated", "Thank you", "Thank you for your interest. There are no further "
                      "HITs for you in this campaign.", entry, 403)
    if not assigning.qualifies(campaign, annotator):
        if annotator.pk is None:  # the declaration that disqualifies a new worker is kept: not asked again
            assigning.store_worker(annotator)
        return _message(request, "Thank you", "This campaign is for native speakers of "
                        f"{languages.name_of(campaign.required_native_language)} only.", 403)
    try:
        assignment = assigning.assign(campaign, annotator, entry, browser=browser, ip=_client_ip(request),
                                      max_open_per_ip=_open_cap(campaign) if crowd else None,
                                      mine=mine)
    except assigning.TooManyOpenHits as exc:
        return _message(request, "Too many open HITs", f"{exc.limit} HIT{'s' if exc.limit != 1 else ''} of this "
                        "campaign are already open from "
                        "your network (your internet address), and no more are handed out to one address. Finish "
                        "one of them, or come back once one is finished or has been left idle for "
                        f"{campaign.hit_timeout_minutes} minutes. {LAB_HINT}", 429, again=True)
    except assigning.HeldElsewhere:
        return _in_use(request, campaign)
    except assigning.NotTrusted as exc:
        return _finished(request, "Thank you", f"{exc.reason} Your work so far is recorded; the completion codes of "
                         "the HITs you finished are below.", assigning.finished(campaign, annotator, browser, mine),
                         entry)
    except assigning.NoHitAvailable:
        done = assigning.finished(campaign, annotator, browser, mine)
        if not done and campaign.stage_input_id is not None and not input_complete(campaign.stage_input):
            return _message(request, "Waiting for the earlier stage", "This stage's work is made from the output of "
                            "an earlier stage of the same task, which is still going on: there is no work for you "
                            "yet. Please come back later; this link will give you work as soon as there is some.",
                            again=True)
        if done:
            return _finished(request, "Thank you", "You have finished your work in this campaign: there is no more "
                             "work for you right now.", done, entry)
        return _message(request, "Thank you", "There is no more work for you in this campaign right now.")
    return redirect("annotation:hit", token=assignment.token)


def _open_cap(campaign: Campaign) -> int | None:
    """Open HITs one address may hold: CROWD_MAX_OPEN_HITS_PER_IP, none for a lab campaign."""
    return None if assigning.is_lab(campaign) else settings.CROWD_MAX_OPEN_HITS_PER_IP


class QualificationForm(forms.Form):
    """The worker's native language as a BCP 47 code, picked from a list of names or typed (docs/api.md §8.1)."""

    native_language = forms.CharField(
        max_length=64, label="Your native language",
        help_text="Pick it from the list, or type its code (e.g. en, de, pt-BR).",
        widget=forms.TextInput(attrs={"list": "languages", "autocomplete": "off", "placeholder": "e.g. en"}))
    country = forms.CharField(max_length=64, label="The country you live in")

    def clean_native_language(self):
        code = languages.to_code(self.cleaned_data["native_language"])
        if code is None:
            raise forms.ValidationError("Pick a language from the list, or type its code: 2 or 3 letters, "
                                        "optionally a script and a region, e.g. en, de, pt-BR, zh-Hant.")
        return code


def _client_ip(request) -> str | None:
    return assigning.client_ip(request.META, settings.TRUSTED_PROXY_COUNT)


def _rate_key(ip: str | None) -> str:
    """An address as the rate limit counts it: IPv6 by its /64 network (what one subscriber is given)."""
    if ip is None:
        return "unknown"
    address = ipaddress.ip_address(ip)
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return ip


def _wait_seconds(request, group: str, value: str, rate: str | None) -> int | None:
    """Count this request against `rate` for `value` (django-ratelimit, in the default cache); the seconds to
    wait when it is over the limit, else None. A cache that cannot be reached limits nothing."""
    if not rate:
        return None
    try:
        usage = get_usage(request, group=group, key=lambda _group, _request: value, rate=rate, increment=True)
    except Exception:  # Redis down: entry goes on without a limit rather than failing
        logger.warning("crowd entry rate limit not checked: the cache cannot be reached", exc_info=True)
        return None
    if usage is None or not usage["should_limit"]:
        return None
    return max(1, usage["time_left"])


def _too_many(request, text: str, seconds: int):
    response = _message(request, "Too many requests", f"{text} Please wait {seconds} seconds, then try again.", 429,
                        again=True)
    response["Retry-After"] = str(seconds)
    return response


def _browser_key(request) -> tuple[str, bool]:
    """The browser's entry cookie, and whether it is new (to be set on the response)."""
    key = request.COOKIES.get(BROWSER_COOKIE, "")
    if assigning.BROWSER_KEY_PATTERN.match(key):
        return key, False
    return secrets.token_urlsafe(32), True


def crowd_start(request, slug: str):
    """`/c/<slug>/start/?worker_id=W` (or PROLIFIC_PID, workerId): to the worker's HIT (docs/api.md §8.1).

    Rate-limited per client address (not for a campaign with lab limits) and per campaign; with
    `require_signed_entry` the link must carry the worker id's signature; the HIT is bound to this browser by a
    cookie (not with lab limits). An unknown slug counts against the address, as a crowd campaign does."""
    campaign = Campaign.objects.filter(slug=slug, analysis_only=False).first()
    if campaign is None or not assigning.is_lab(campaign):
        wait = _wait_seconds(request, "crowd-entry-ip", _rate_key(_client_ip(request)),
                             settings.CROWD_ENTRY_RATE_PER_IP)
        if wait:
            return _too_many(request, f"Too many requests have come from your network. {LAB_HINT}", wait)
    if campaign is None:
        raise Http404
    wait = _wait_seconds(request, "crowd-entry-campaign", str(campaign.pk), settings.CROWD_ENTRY_RATE_PER_CAMPAIGN)
    if wait:
        return _too_many(request, "Many people are starting this campaign right now.", wait)
    try:
        worker = assigning.worker_from_query(request.GET)
    except assigning.InvalidWorkerId as exc:
        return _message(request, "Invalid worker id", str(exc), 400)
    if campaign.require_signed_entry:
        if worker is None:
            return _message(request, "Personal link needed", "This campaign is entered only through the personal "
                            "link you were given, which carries your worker id and its signature. Please open that "
                            "link.", 403)
        if not assigning.signature_matches(campaign, worker[0], request.GET.get("signature")):
            return _message(request, "Link not valid", "This link's signature is missing or does not match its "
                            "worker id. Please open the exact link you were given, unchanged.", 403)
    if worker is None:
        return render(request, "annotation/start.html", {"campaign": campaign})
    bind = settings.CROWD_BIND_BROWSER and not assigning.is_lab(campaign)
    browser, new = _browser_key(request) if bind else (None, False)
    response = _crowd_enter(request, campaign, worker, browser)
    if new and response.status_code != 409:  # a refused browser keeps its key (a parallel first request's)
        response.set_cookie(BROWSER_COOKIE, browser, max_age=BROWSER_COOKIE_AGE, httponly=True, samesite="Lax",
                            secure=request.is_secure())
    return response


def _crowd_enter(request, campaign: Campaign, worker: tuple[str, str], browser: str | None):
    """A worker id held by another browser gets `_in_use` before anything of the worker's is shown or changed; a
    worker first seen is stored only once a HIT is handed out (with their qualification answers)."""
    annotator = assigning.crowd_worker(*worker)
    if annotator.source == trials.TRIAL_SOURCE:  # a researcher's test worker enters by "Try as a worker" alone
        return _message(request, "Invalid worker id", "This worker id is a researcher's test worker, not a crowd "
                        "worker's: please open the link you were given.", 400)
    mine = assigning.worker_assignments(campaign, annotator)
    if browser is not None and campaign.accepts_annotators and assigning.in_use_elsewhere(campaign, mine, browser):
        return _in_use(request, campaign)
    entry = assigning.entry_from_query(request.GET, worker[0])
    if campaign.accepts_annotators and assigning.needs_qualification(campaign, annotator):
        form = QualificationForm(request.POST or None)
        if request.method != "POST" or not form.is_valid():
            return render(request, "annotation/qualification.html",
                          {"campaign": campaign, "form": form, "languages": languages.LANGUAGES})
        annotator.native_language = form.cleaned_data["native_language"]
        annotator.country = form.cleaned_data["country"]
        if annotator.pk is not None:
            annotator.save(update_fields=["native_language", "country"])
    return _hand_out(request, campaign, annotator, entry, crowd=True, browser=browser, mine=mine)


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
    assignment = get_object_or_404(Assignment.objects.select_related("campaign", "annotator"), token=token)
    campaign = assignment.campaign
    if campaign.status == Campaign.Status.CLOSED and assignment.status != Assignment.Status.COMPLETED:
        return _message(request, "Campaign closed", CLOSED_TEXT, 410)
    if assignment.status == Assignment.Status.ABANDONED and assigning.is_blocked(campaign, assignment.annotator):
        return _ended(request, campaign, "gated", "Thank you", "Thank you for your interest. There are no further "
                      "HITs for you in this campaign.", assignment.entry, 403)  # kept out by hand or by the gate
    if assignment.status == Assignment.Status.ABANDONED:
        return _ended(request, campaign, "timed_out", "HIT expired", "You were idle too long and this HIT went to "
                      "another worker. Start again from the campaign link to get a new one.", assignment.entry, 410)
    protocol = campaign.protocol_spec
    config = {
        "api": f"/api/hit/{token}/",
        "completion_redirect_ms": COMPLETION_REDIRECT_MS,
        "require_media_played": (campaign.options or {}).get("require_media_played") or 0,  # media.js holds Submit
        "allow_item_navigation": navigation_allowed(campaign),
    }
    return render(request, "annotation/hit.html", {
        "campaign": campaign, "protocol": protocol, "config": config,
        "target_dir": "rtl" if is_rtl(campaign.target_language) else "ltr",
        "source_dir": "rtl" if is_rtl(campaign.source_language or "") else "ltr",
        "statement": campaign.effective_statement,
        # a researcher's own "Try as a worker" HIT says so (services/trials.py); a crowd worker's page is unchanged
        "trial": assignment.annotator.external_id if assignment.annotator.source == trials.TRIAL_SOURCE else "",
    })
