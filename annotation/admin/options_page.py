"""The admin's page for a stored campaign's statistics options (docs/api.md#analysis-options): the same fields as
the import form, from `Protocol.analysis_options`, filled with what the campaign holds; a save validates as the
API's PATCH does (`campaign_options.parse_change`), names each bad option and changes nothing, else stores the
options and queues a recompute."""
from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from ..extensions import results_source
from ..import_form import option_field
from ..protocols.options import OptionError, defaulted
from ..services.campaign_options import apply_options, parse_change, stored_values


def options_form(campaign, data=None) -> forms.Form:
    """One field per statistics option of the campaign's protocol, initially its stored value; one that only
    follows from another (the preset's test) starts at "default", so that it follows a new preset."""
    spec = campaign.protocol_spec
    stored = stored_values(campaign)
    for name in defaulted(spec.name, spec.analysis_options(), stored):
        stored.pop(name)
    form = forms.Form(data)
    for option in spec.analysis_options():
        field = option_field(option, [spec.name], [spec.name])
        value = stored.get(option.name)
        field.initial = ("true" if value else "false") if isinstance(value, bool) else value
        form.fields[option.name] = field
    return form


def options_view(model_admin, request, pk: int):
    campaign = get_object_or_404(model_admin.get_queryset(request), pk=pk)
    form = options_form(campaign, request.POST if request.method == "POST" else None)
    if request.method == "POST":
        if not model_admin.has_change_permission(request, campaign):
            raise PermissionDenied
        form.is_valid()
        given = {name: form.cleaned_data.get(name) for name in form.fields}
        try:
            changed = apply_options(campaign, parse_change(campaign, given))
        except OptionError as exc:
            for name, reason in exc.errors:
                form.add_error(name if name in form.fields else None, reason)
        else:
            queued = results_source().recompute(campaign) if changed else False
            messages.success(request, (f"Changed: {', '.join(changed)}; " + ("a recompute is queued." if queued else
                                       "recompute the results.")) if changed else "Nothing changed.")
            return redirect(reverse("admin:annotation_campaign_options", args=[pk]))
    return render(request, "admin/annotation/campaign/options.html", {
        **model_admin.admin_site.each_context(request), "campaign": campaign, "opts": model_admin.model._meta,
        "title": f"{campaign.name}: statistics options", "form": form})
