"""The campaign and study admins: one page per campaign with its status, links, progress and actions, the import
form on the list, and sharing (annotation/admin/__init__.py)."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Min, Q, Sum
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path, reverse
from django.utils.http import url_has_allowed_host_and_scheme

from ..import_form import ADMIN_DEFAULTS, CampaignImportForm, KeptUploads
from ..models import (
    Campaign,
    ImportJob,
    Study,
)
from ..ownership import can_share, is_superuser
from ..protocols import all_protocols, get_protocol
from ..protocols.options import union
from ..services import import_jobs, lifecycle, trials
from ..services.campaign_import import (
    MAX_REPORTED_ERRORS,
    CampaignFileError,
    import_campaign,
)
from ..services.crowd_links import active_entry_limits, entry_limits_text
from ..services.progress import EMPTY, campaign_counts
from ..services.stages import build_stages, stage_progress
from .campaign_list import CampaignListColumns
from .campaign_page import (
    campaign_links,
    capacity_of,
    conventions_shown,
    item_summary,
    preview_systems,
    size_warnings_of,
    text_blocks,
    visible_annotators,
)
from .options_page import options_view


class OwnedAdmin(admin.ModelAdmin):
    """Campaigns and studies: the user's own and those shared with them; only a superuser gives them another owner,
    only the owner (or a superuser) shares them."""

    filter_horizontal = ["shared_with", "shared_with_groups"]

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if not is_superuser(request.user):
            fields.append("owner")
            if obj is not None and not can_share(request.user, obj):
                fields += ["shared_with", "shared_with_groups"]
        return fields

    def change_view(self, request, object_id, form_url="", extra_context=None):
        if self.get_object(request, object_id) is None:
            raise Http404(f"No such {self.opts.verbose_name}.")  # someone else's is not found either
        return super().change_view(request, object_id, form_url, extra_context)


@admin.register(Campaign)
class CampaignAdmin(CampaignListColumns, OwnedAdmin):
    list_select_related = ["owner"]
    list_filter = ["protocol", "status", "analysis_only"]
    search_fields = ["name", "slug"]
    readonly_fields = ["slug", "protocol", "seed", "hit_size", "options", "created_at"]
    filter_horizontal = ["in_house_annotators", "blocked_annotators", "shared_with", "shared_with_groups"]
    change_list_template = "admin/annotation/campaign/change_list.html"
    change_form_template = "admin/annotation/campaign/change_form.html"
    actions = ["publish", "pause", "close", "build_next_stages"]

    def get_queryset(self, request):
        return super().get_queryset(request).visible_to(request.user)

    def has_add_permission(self, request):
        return False  # campaigns are created by importing a file

    def get_form(self, request, obj=None, change=False, **kwargs):
        request.admin_campaign = obj  # for the study field's choices, below
        return super().get_form(request, obj, change, **kwargs)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        """The study: one the campaign's owner may join (theirs, or shared with them) that the user may see, or the
        one the campaign is in already; never another researcher's study (docs/api.md §6.1, "Whose studies")."""
        if db_field.name == "study":
            campaign = getattr(request, "admin_campaign", None)
            current = [campaign.study_id] if campaign is not None and campaign.study_id else []
            choices = Study.joinable_by(campaign.owner if campaign is not None else request.user)
            if not is_superuser(request.user):
                choices = choices.filter(pk__in=Study.objects.visible_to(request.user).values("pk"))
            kwargs["queryset"] = Study.objects.filter(Q(pk__in=choices.values("pk")) | Q(pk__in=current))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "blocked_annotators" and not is_superuser(request.user):
            kwargs["queryset"] = visible_annotators(request.user)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("import/", view(self.import_view), name="annotation_campaign_import"),
            path("import/<uuid:job_id>/", view(self.import_job_view), name="annotation_campaign_import_job"),
            path("<int:pk>/preview/", view(self.preview_view), name="annotation_campaign_preview"),
            path("<int:pk>/status/", view(self.status_view), name="annotation_campaign_status"),
            path("<int:pk>/curate/", view(self.curate_view), name="annotation_campaign_curate"),
            path("<int:pk>/options/", view(lambda request, pk: options_view(self, request, pk)),
                 name="annotation_campaign_options"),
        ] + super().get_urls()

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        """The reliability test as a choice among the registered tests (the column itself has no choices)."""
        if db_field.name == "qc_test":
            option = next(option for option, _ in union(all_protocols()) if option.name == "qc_test")
            return forms.ChoiceField(choices=option.choice_list, label=option.title, help_text=option.help)
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    # The campaign's page ----------------------------------------------------------------------------

    def change_view(self, request, object_id, form_url="", extra_context=None):
        campaign = self.get_object(request, object_id)
        if campaign is not None:
            extra_context = {**(extra_context or {}), **self._overview(request, campaign),
                             "title": campaign.name, "subtitle": None}
        return super().change_view(request, object_id, form_url, extra_context)

    def _overview(self, request, campaign: Campaign) -> dict:
        counts = campaign_counts([campaign]).get(campaign.pk, EMPTY)
        items = campaign.hits.aggregate(items=Sum("size"), smallest=Min("size"))
        needed = counts["hits_total"] * campaign.redundancy
        return {
            "links": campaign_links(request, campaign), "counts": counts,
            "assignments_needed": needed, "judgments_needed": (items["items"] or 0) * campaign.redundancy,
            # HITs done × redundancy of HITs × redundancy, as the Stages card and the campaign list count them
            "done_percent": round(100 * counts["hits_done"] / counts["hits_total"]) if counts["hits_total"] else 0,
            "status_help": STATUS_HELP.get(campaign.status, ""),
            "stages": stage_progress(campaign),
            "curated": campaign.protocol_spec.curated,
            "entry_limits": entry_limits_text(active_entry_limits(campaign)),
            "may_try": trials.may_try(request.user, campaign) and trials.triable(campaign),
        }

    # Import -----------------------------------------------------------------------------------------

    def import_view(self, request):
        uploads = KeptUploads(request.session)
        kept = uploads.get(request.POST.get("kept_file")) if request.method == "POST" else None
        form = CampaignImportForm(request.POST or None, request.FILES or None, kept=kept)
        if request.method == "POST":
            upload = request.FILES.get("file")
            if form.is_valid():
                if import_jobs.is_large(upload.size if upload is not None else kept["size"]):
                    return self._import_in_background(request, form, upload, kept, uploads)
                data = form.cleaned_data
                source = upload or uploads.open(kept)
                try:
                    result = import_campaign(source, name=data["name"], protocol=data["protocol"],
                                             parsed=form.parsed, owner=request.user)
                except CampaignFileError as exc:
                    self._file_errors(form, exc)
                    form.suggest(exc.suggestions)
                else:
                    uploads.discard(kept)
                    return self._imported(request, result)
                finally:
                    if source is not upload:
                        source.close()
            if upload is not None:  # keep the new file for the next submit
                uploads.discard(kept)
                form.kept = uploads.keep(upload)
        return render(request, "admin/annotation/campaign/import.html", {
            **self.admin_site.each_context(request), "form": form, "opts": self.model._meta,
            "title": "Import a campaign",
        })

    def _import_in_background(self, request, form, upload, kept, uploads):
        """A large file: saved for a background job (the same as the API's), whose page shows its progress."""
        data = form.cleaned_data
        protocol = get_protocol(data["protocol"])
        source = upload or uploads.open(kept)
        try:
            job = import_jobs.start("campaign", source, {
                "name": data["name"], "protocol": protocol.name,
                "options": form.raw,
                "defaults": ADMIN_DEFAULTS,
                "file": {"name": upload.name if upload is not None else kept["name"],
                         "size": upload.size if upload is not None else kept["size"]},
            }, request.user)
        finally:
            if source is not upload:
                source.close()
        uploads.discard(kept)
        return redirect(reverse("admin:annotation_campaign_import_job", args=[job.pk]))

    def import_job_view(self, request, job_id):
        """A background import's page: its stage and the lines read, refreshed every 2 s (a <meta> refresh: the
        CSP allows no inline script) until it ends, then what was imported or the file's problems."""
        jobs = ImportJob.objects.filter(pk=job_id, kind="campaign")
        if not request.user.is_superuser:
            jobs = jobs.filter(created_by=request.user)
        job = get_object_or_404(jobs)
        running = job.status in (ImportJob.Status.QUEUED, ImportJob.Status.RUNNING)
        context = {"job": job, "running": running, "name": job.arguments.get("name", ""),
                   "file": job.arguments.get("file") or {}, "lines_read": f"{job.lines_read:,}",
                   "import_url": reverse("admin:annotation_campaign_import")}
        if job.status == ImportJob.Status.DONE:
            campaign = Campaign.objects.filter(slug=job.result.get("campaign")).first()
            hits = job.result.get("hits", 0)
            context.update(campaign=campaign, hits=f"{hits} HIT" + ("" if hits == 1 else "s"),
                           draft=campaign is not None and campaign.status == Campaign.Status.DRAFT,
                           warnings=job.result.get("warnings") or [])
        elif job.status == ImportJob.Status.FAILED:
            shown = job.errors[:MAX_REPORTED_ERRORS]
            context.update(errors=[f"line {line}: {reason}" if line else reason for line, reason in shown],
                           more=len(job.errors) - len(shown),
                           suggestions=(job.result or {}).get("suggestions") or {})
        return render(request, "admin/annotation/campaign/import_job.html", {
            **self.admin_site.each_context(request), **context, "opts": self.model._meta,
            "title": f"Importing {context['name']}" if running else f"Import of {context['name']}",
        })

    def _imported(self, request, result):
        campaign = result.campaign
        hits = f"{result.hits} HIT" + ("" if result.hits == 1 else "s")
        if campaign.status == Campaign.Status.DRAFT:
            messages.success(request, f"Imported {campaign.name}: {hits}. It is a draft: check the preview, then "
                                      "publish it.")
        else:
            messages.success(request, f"Imported {campaign.name}: {hits}. It is open to annotators.")
        # result.warnings (weak quality control) are shown by the preview itself, computed from the stored HITs.
        return redirect(reverse("admin:annotation_campaign_preview", args=[campaign.pk]))

    @staticmethod
    def _file_errors(form, exc: CampaignFileError):
        """The file's problems by line next to the file; a setting the file contradicts next to that setting."""
        for line, reason in exc.errors[:MAX_REPORTED_ERRORS]:
            name, _, rest = reason.partition(": ")
            if not line and rest and name in form.fields:
                form.add_error(name, rest)
            else:
                form.add_error("file", f"line {line}: {reason}" if line else reason)
        if len(exc.errors) > MAX_REPORTED_ERRORS:
            form.add_error("file", f"… and {len(exc.errors) - MAX_REPORTED_ERRORS} more problems")
        form.add_error(None, "The file was refused; nothing was imported.")

    # Preview ----------------------------------------------------------------------------------------

    def preview_view(self, request, pk: int):
        campaign = get_object_or_404(self.get_queryset(request), pk=pk)
        hit = campaign.hits.order_by("number").first()
        items = list(hit.items.select_related("output__system", "segment__document").order_by("position")) if hit \
            else []
        protocol = campaign.protocol_spec
        options = campaign.options or {}
        rows = [{"item": item, "blocks": text_blocks(protocol.item_payload(item)), "type": protocol.preview_type(item),
                 "systems": preview_systems(protocol, item, options)} for item in items]
        capacity = capacity_of(campaign) if hit else None
        return render(request, "admin/annotation/campaign/preview.html", {
            **self.admin_site.each_context(request), "campaign": campaign, "hit": hit, "rows": rows,
            "counts": item_summary(rows), "hits": campaign.hits.count(),
            "qc_warning": capacity.warning() if capacity else None, "links": campaign_links(request, campaign),
            "conventions": conventions_shown(campaign), "size_warnings": size_warnings_of(campaign),
            "opts": self.model._meta, "title": f"Preview: {campaign.name}",
        })

    # Status -----------------------------------------------------------------------------------------

    def status_view(self, request, pk: int):
        campaign = get_object_or_404(self.get_queryset(request), pk=pk)
        page = reverse("admin:annotation_campaign_change", args=[pk])
        if request.method == "POST" and not self.has_change_permission(request, campaign):
            raise PermissionDenied
        status = request.POST.get("status")
        if request.method != "POST" or status not in Campaign.Status.values:
            return redirect(page)
        if campaign.analysis_only:
            messages.warning(request, f"{campaign.name} holds imported judgments only; its status stays as it is.")
        else:  # the whole task: every stage of a multi-stage task (services/lifecycle.py)
            messages.success(request, lifecycle.status_message(campaign, lifecycle.set_status(campaign, status)))
        target = request.POST.get("next") or ""
        if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                               require_https=request.is_secure()) or not target.startswith("/"):
            target = page
        return redirect(target)

    def curate_view(self, request, pk: int):
        """A stage's output the researcher may keep or drop by hand (e.g. reading comprehension's questions,
        docs/methods.md §9.3): the protocol says what (`Protocol.curated`, `curation_rows`, `curate`)."""
        campaign = get_object_or_404(self.get_queryset(request), pk=pk)
        spec = campaign.protocol_spec
        if not spec.curated:
            raise Http404("nothing to curate in this campaign")
        if request.method == "POST":
            if not self.has_change_permission(request, campaign):
                raise PermissionDenied
            choice = {"keep": True, "drop": False, "votes": None}.get(request.POST.get("choice", ""), "bad")
            keys = {row["key"] for row in spec.curation_rows(campaign)}
            key = request.POST.get("key", "")
            if choice == "bad" or key not in keys:
                messages.error(request, "Choose keep, drop or the votes for one of the listed items.")
            else:
                spec.curate(campaign, key, choice)
                messages.success(request, f"{key}: {'kept' if choice else 'dropped' if choice is False else 'as voted'}"
                                          " (HITs built from now on follow this).")
            return redirect(reverse("admin:annotation_campaign_curate", args=[pk]))
        return render(request, "admin/annotation/campaign/curate.html", {
            **self.admin_site.each_context(request), "campaign": campaign, "opts": self.model._meta,
            "title": f"{campaign.name}: {spec.curated}", "what": spec.curated, "rows": spec.curation_rows(campaign),
        })

    def _set_status(self, request, queryset, status: str):
        changed, analysis_only = lifecycle.set_status_of_many(queryset, status)
        label = Campaign.Status(status).label.lower()
        later = sum(1 for stage in changed if stage.stage_input_id is not None)
        messages.success(request, f"{len(changed)} campaign(s) now {label}"
                                  + (f", {later} of them later stages of the tasks chosen." if later else "."))
        if analysis_only:
            messages.warning(request, f"{analysis_only} analysis-only campaign(s) left as they were.")

    @admin.action(description="Publish: open to annotators")
    def publish(self, request, queryset):
        self._set_status(request, queryset, Campaign.Status.ACTIVE)

    @admin.action(description="Pause: no new items for now")
    def pause(self, request, queryset):
        self._set_status(request, queryset, Campaign.Status.PAUSED)

    @admin.action(description="Close")
    def close(self, request, queryset):
        self._set_status(request, queryset, Campaign.Status.CLOSED)

    @admin.action(description="Build the next stages from the output so far (multi-stage tasks)")
    def build_next_stages(self, request, queryset):
        built = {slug: n for campaign in queryset for slug, n in build_stages(campaign).items()}
        if not built:
            messages.warning(request, "None of these campaigns feeds a later stage.")
            return
        messages.success(request, "; ".join(f"{slug}: {n} new HIT{'s' * (n != 1)}" for slug, n in built.items()))


STATUS_HELP = {
    Campaign.Status.DRAFT: "Annotators cannot start yet: check the preview, then publish.",
    Campaign.Status.ACTIVE: "Open: annotators who follow the link get a HIT.",
    Campaign.Status.PAUSED: "Paused: the link refuses annotators until you publish again; judgments are kept.",
    Campaign.Status.CLOSED: "Closed: the link refuses annotators; the results stay.",
}


@admin.register(Study)
class StudyAdmin(OwnedAdmin):
    list_display = ["name", "slug", "owner", "created_at"]
    search_fields = ["name", "slug"]
    readonly_fields = ["created_at"]

    def get_queryset(self, request):
        return super().get_queryset(request).visible_to(request.user)

    def get_form(self, request, obj=None, change=False, **kwargs):
        """A name its owner already gives another study is refused on the form: for a researcher the owner is not
        a field of it, so Django would not check the per-owner unique name and the save would fail."""
        form = super().get_form(request, obj, change, **kwargs)
        owner = obj.owner if obj is not None else request.user

        class StudyForm(form):
            def clean(self):
                data = super().clean()
                name = data.get("name")
                if ("owner" not in self.fields and name
                        and Study.objects.filter(name=name, owner=owner).exclude(pk=self.instance.pk).exists()):
                    self.add_error("name", f"Its owner already has a study named {name!r}.")
                return data

        return StudyForm

    def save_model(self, request, obj, form, change):
        if not change and obj.owner_id is None:
            obj.owner = request.user
        super().save_model(request, obj, form, change)


