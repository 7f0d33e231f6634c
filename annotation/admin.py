"""Admin for campaigns and what they hold; campaign files are uploaded from the campaign list."""
from collections import Counter

from django import forms
from django.contrib import admin, messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path, reverse

from .import_form import CampaignImportForm
from .models import Annotator, Assignment, Campaign, Document, Hit, HitItem, Judgment, Segment, System
from .protocols import all_protocols
from .protocols.options import union
from .services import assignment as assigning
from .services.campaign_import import MAX_REPORTED_ERRORS, CampaignFileError, import_campaign


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "protocol", "status", "redundancy", "hit_size", "created_at"]
    list_filter = ["protocol", "status", "analysis_only"]
    search_fields = ["name", "slug"]
    readonly_fields = ["slug", "protocol", "seed", "hit_size", "options", "created_at"]
    filter_horizontal = ["in_house_annotators", "blocked_annotators"]
    change_list_template = "admin/annotation/campaign/change_list.html"
    change_form_template = "admin/annotation/campaign/change_form.html"
    actions = ["publish", "pause", "close"]

    def has_add_permission(self, request):
        return False  # campaigns are created by importing a file

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("import/", view(self.import_view), name="annotation_campaign_import"),
            path("<int:pk>/preview/", view(self.preview_view), name="annotation_campaign_preview"),
            path("<int:pk>/status/", view(self.status_view), name="annotation_campaign_status"),
        ] + super().get_urls()

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        """The reliability test as a choice among the registered tests (the column itself has no choices)."""
        if db_field.name == "qc_test":
            option = next(option for option, _ in union(all_protocols()) if option.name == "qc_test")
            return forms.ChoiceField(choices=option.choice_list, label=option.title, help_text=option.help)
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def import_view(self, request):
        form = CampaignImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                result = import_campaign(data["file"], name=data["name"], protocol=data["protocol"],
                                         parsed=form.parsed)
            except CampaignFileError as exc:
                self._file_errors(form, exc)
            else:
                hits = f"{result.hits} HIT" + ("" if result.hits == 1 else "s")
                if result.campaign.status == Campaign.Status.DRAFT:
                    messages.success(request, f"Imported {result.campaign.name}: {hits}. It is a draft: "
                                              "check the preview, then publish it.")
                else:
                    messages.success(request, f"Imported {result.campaign.name}: {hits}. It is open to annotators.")
                return redirect(reverse("admin:annotation_campaign_preview", args=[result.campaign.pk]))
        return render(request, "admin/annotation/campaign/import.html", {
            **self.admin_site.each_context(request), "form": form, "opts": self.model._meta,
            "title": "Import a campaign",
        })

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

    def preview_view(self, request, pk: int):
        campaign = get_object_or_404(Campaign, pk=pk)
        hit = campaign.hits.order_by("number").first()
        items = list(hit.items.select_related("output__system", "segment__document").order_by("position")) if hit \
            else []
        protocol = campaign.protocol_spec
        rows = [{"item": item, "shown": protocol.item_payload(item)} for item in items]
        return render(request, "admin/annotation/campaign/preview.html", {
            **self.admin_site.each_context(request), "campaign": campaign, "hit": hit, "rows": rows,
            "counts": Counter(item.item_type for item in items).most_common(), "hits": campaign.hits.count(),
            "opts": self.model._meta, "title": f"Preview: {campaign.name}",
        })

    def status_view(self, request, pk: int):
        get_object_or_404(Campaign, pk=pk)
        status = request.POST.get("status")
        if request.method != "POST" or status not in Campaign.Status.values:
            return redirect(reverse("admin:annotation_campaign_change", args=[pk]))
        self._set_status(request, Campaign.objects.filter(pk=pk), status)
        return redirect(request.POST.get("next") or reverse("admin:annotation_campaign_change", args=[pk]))

    def _set_status(self, request, queryset, status: str):
        analysis_only = queryset.filter(analysis_only=True).count()
        updated = queryset.filter(analysis_only=False).update(status=status)
        label = Campaign.Status(status).label.lower()
        messages.success(request, f"{updated} campaign(s) now {label}.")
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


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["doc_id", "campaign", "position"]
    list_filter = ["campaign"]


@admin.register(Segment)
class SegmentAdmin(admin.ModelAdmin):
    list_display = ["document", "seg_id", "campaign"]
    list_filter = ["campaign"]
    list_select_related = ["document", "campaign"]


@admin.register(System)
class SystemAdmin(admin.ModelAdmin):
    list_display = ["name", "campaign"]
    list_filter = ["campaign"]


class HitItemInline(admin.TabularInline):
    model = HitItem
    fields = ["position", "set_index", "item_type", "segment", "output", "text", "partner_position"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Hit)
class HitAdmin(admin.ModelAdmin):
    list_display = ["number", "campaign", "size"]
    list_filter = ["campaign"]
    inlines = [HitItemInline]


@admin.register(Annotator)
class AnnotatorAdmin(admin.ModelAdmin):
    list_display = ["__str__", "source", "native_language", "country", "created_at"]
    search_fields = ["external_id", "user__username"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["annotator", "campaign", "hit", "status", "position", "started_at", "completed_at"]
    list_filter = ["campaign", "status"]
    search_fields = ["annotator__external_id", "annotator__user__username"]
    actions = ["block_workers"]

    @admin.action(description="Block these workers from these campaigns")
    def block_workers(self, request, queryset):
        pairs = {(a.campaign, a.annotator) for a in queryset.select_related("campaign", "annotator")}
        for campaign, annotator in pairs:
            assigning.block(campaign, annotator)
        messages.success(request, f"Blocked {len(pairs)} worker(s); their unfinished HITs were ended.")
    exclude = ["token"]
    readonly_fields = ["campaign", "hit", "annotator", "position", "last_item_id", "item_served_at", "started_at",
                       "last_activity_at", "completed_at", "completion_code"]


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ["annotator", "campaign", "item", "score", "choice", "seconds", "created_at"]
    list_filter = ["campaign"]
    list_select_related = ["annotator", "campaign", "item"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
