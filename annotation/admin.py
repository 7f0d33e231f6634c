"""Admin for campaigns and what they hold; campaign files are uploaded from the campaign list."""
from collections import Counter

from django import forms
from django.contrib import admin, messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path, reverse

from .models import Annotator, Assignment, Campaign, Document, Hit, HitItem, Judgment, Segment, System
from .protocols import protocol_choices
from .services import assignment as assigning
from .services.campaign_import import MAX_REPORTED_ERRORS, CampaignFileError, import_campaign


class CampaignImportForm(forms.Form):
    """Everything a campaign needs, in one form; the file is validated whole and its errors shown by line."""

    file = forms.FileField(help_text="JSON Lines, one source segment a line (see CONTRACT.md).")
    name = forms.CharField(max_length=200)
    protocol = forms.ChoiceField(choices=protocol_choices)
    source_language = forms.CharField(max_length=16, required=False)
    target_language = forms.CharField(max_length=16, initial="en")
    statement = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False,
                                help_text="The question, in the target language; the protocol's default if empty.")
    instructions = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}), required=False,
                                   help_text="Shown before the first item (Markdown).")
    redundancy = forms.IntegerField(min_value=1, initial=1, help_text="Distinct workers per HIT.")
    hit_size = forms.IntegerField(initial=100, help_text="Direct Assessment: items per HIT (multiple of 20).")
    seed = forms.IntegerField(min_value=0, required=False, help_text="Random if empty.")
    qc_test = forms.ChoiceField(choices=Campaign.QualityTest.choices, initial=Campaign.QualityTest.PAIRED_T,
                                label="Reliability test")
    qc_threshold = forms.FloatField(min_value=0.0001, max_value=0.5, initial=0.05, label="Reliability threshold")
    systems = forms.CharField(required=False, help_text="Pairwise: the two systems compared, A,B.")
    unit = forms.ChoiceField(choices=[("document", "document"), ("sentence", "sentence"), ("both", "both")],
                             initial="document", help_text="Pairwise: what is compared.")
    docs_per_hit = forms.IntegerField(min_value=1, initial=10, help_text="Pairwise: documents per HIT.")
    spam_rate_document = forms.FloatField(min_value=0, max_value=1, initial=round(5 / 55, 4),
                                          help_text="Pairwise: spam documents per document item (003: 5 of 55).")
    spam_rate_sentence = forms.FloatField(min_value=0, max_value=1, initial=round(16 / 120, 4),
                                          help_text="Pairwise: spam sentences per sentence item (003: 16 of 120).")
    max_spam_miss_rate = forms.FloatField(min_value=0, max_value=1, initial=0.2,
                                          help_text="Pairwise: judges who miss more spam items are excluded.")
    payment_per_hit = forms.DecimalField(min_value=0, max_digits=8, decimal_places=2, initial=0)
    hit_timeout_minutes = forms.IntegerField(min_value=1, initial=60,
                                             help_text="An idle worker's HIT goes to someone else after this.")
    completion_code = forms.CharField(max_length=64, required=False,
                                      help_text="One code for every worker (e.g. Prolific's); random per HIT if empty.")
    require_qualification = forms.BooleanField(required=False,
                                               help_text="Ask crowd workers for native language and country first.")
    required_native_language = forms.CharField(max_length=64, required=False)

    PAIRWISE_FIELDS = ("systems", "unit", "docs_per_hit", "spam_rate_document", "spam_rate_sentence",
                       "max_spam_miss_rate")

    def import_arguments(self) -> dict:
        data = dict(self.cleaned_data)
        data.pop("file")
        pairwise = {k: data.pop(k) for k in self.PAIRWISE_FIELDS}
        options = {}
        if data["protocol"].startswith("pairwise"):
            options = {"systems": [s.strip() for s in pairwise["systems"].split(",") if s.strip()],
                       "unit": pairwise["unit"], "docs_per_hit": pairwise["docs_per_hit"],
                       "spam_rates": {"document": pairwise["spam_rate_document"],
                                      "sentence": pairwise["spam_rate_sentence"]},
                       "max_spam_miss_rate": pairwise["max_spam_miss_rate"]}
        return {**data, "options": options, "status": Campaign.Status.DRAFT}


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

    def import_view(self, request):
        form = CampaignImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            try:
                result = import_campaign(form.cleaned_data["file"], **form.import_arguments())
            except CampaignFileError as exc:
                for line, reason in exc.errors[:MAX_REPORTED_ERRORS]:
                    form.add_error("file", f"line {line}: {reason}" if line else reason)
                if len(exc.errors) > MAX_REPORTED_ERRORS:
                    form.add_error("file", f"… and {len(exc.errors) - MAX_REPORTED_ERRORS} more problems")
                form.add_error(None, "The file was refused; nothing was imported.")
            else:
                hits = f"{result.hits} HIT" + ("" if result.hits == 1 else "s")
                messages.success(request, f"Imported {result.campaign.name}: {hits}. It is a draft: "
                                          "check the preview, then publish it.")
                return redirect(reverse("admin:annotation_campaign_preview", args=[result.campaign.pk]))
        return render(request, "admin/annotation/campaign/import.html", {
            **self.admin_site.each_context(request), "form": form, "opts": self.model._meta,
            "title": "Import a campaign",
        })

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
