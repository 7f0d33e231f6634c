"""The power-and-cost page (docs/methods.md §12.3): a GET form (δ, power, α, scale) over a campaign's judgments so
far, answered with the judgments, HITs and money a campaign needs, and the power curve. The numbers come from the
family's `power` endpoint, the same as `GET /api/campaigns/<slug>/power/`; a bad query or a campaign with too
little data is shown on the page as the API's message."""
from __future__ import annotations

from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from annotation.models import Campaign
from annotation.permissions import researcher_required

from ..charts.power import power_chart
from ..families import BadQuery, family_of

FIELDS = ("delta", "power", "alpha", "scale")
DEFAULTS = {"delta": "", "power": "0.8", "alpha": "0.05", "scale": "raw"}


@require_GET
@researcher_required
def power_page(request, slug: str):
    campaign: Campaign = get_object_or_404(Campaign.objects.visible_to(request.user), slug=slug)
    handler = family_of(campaign).endpoint("power")
    form = {name: request.GET.get(name, DEFAULTS[name]).strip() for name in FIELDS}
    context = {"campaign": campaign, "form": form, "error": None, "answer": None, "chart": None,
               "available": handler is not None}
    if handler is None:
        context["error"] = "Power estimates are available for Direct Assessment campaigns only."
    elif "delta" in request.GET:
        try:
            answer = handler(campaign, {name: value for name, value in form.items() if value != ""})
        except BadQuery as exc:
            context["error"] = str(exc)
        else:
            plan = answer["plan"]
            context["answer"] = answer
            context["chart"] = power_chart(answer["curve"], target=answer["query"]["power"],
                                           answer=plan["translations_per_system"] if plan else None)
    return render(request, "evaluation/power.html", context)
