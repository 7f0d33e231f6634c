"""Admin for campaigns and what they hold; campaign files are uploaded from the campaign list."""
from django import forms
from django.contrib import admin, messages
from django.shortcuts import redirect, render
from django.urls import path, reverse

from .models import Annotator, Assignment, Campaign, Document, Hit, HitItem, Judgment, Segment, System
from .protocols import protocol_choices
from .services.campaign_import import CampaignFileError, import_campaign


class CampaignImportForm(forms.Form):
    file = forms.FileField(help_text="JSON Lines, one source segment a line (see CONTRACT.md).")
    name = forms.CharField(max_length=200)
    protocol = forms.ChoiceField(choices=protocol_choices)
    redundancy = forms.IntegerField(min_value=1, initial=1, help_text="Distinct workers per HIT.")
    seed = forms.IntegerField(min_value=0, required=False, help_text="Random if empty.")
    hit_size = forms.IntegerField(initial=100)
    source_language = forms.CharField(max_length=16, required=False)
    target_language = forms.CharField(max_length=16, initial="en")
    statement = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False,
                                help_text="The Likert statement in the target language; "
                                          "the protocol's default if empty.")


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "protocol", "status", "redundancy", "hit_size", "created_at"]
    list_filter = ["protocol", "status", "analysis_only"]
    search_fields = ["name", "slug"]
    readonly_fields = ["slug", "protocol", "seed", "hit_size", "created_at"]
    filter_horizontal = ["in_house_annotators"]
    change_list_template = "admin/annotation/campaign/change_list.html"

    def has_add_permission(self, request):
        return False  # campaigns are created by importing a file

    def get_urls(self):
        return [path("import/", self.admin_site.admin_view(self.import_view), name="annotation_campaign_import")] + \
            super().get_urls()

    def import_view(self, request):
        form = CampaignImportForm(request.POST or None, request.FILES or None)
        file_errors = []
        if request.method == "POST" and form.is_valid():
            data = dict(form.cleaned_data)
            upload = data.pop("file")
            try:
                result = import_campaign(upload, **data)
            except CampaignFileError as exc:
                file_errors = exc.errors
                form.add_error(None, "The file was refused; nothing was imported.")
            else:
                messages.success(request, f"Imported {result.campaign.name}: {result.hits} HITs.")
                return redirect(reverse("admin:annotation_campaign_change", args=[result.campaign.pk]))
        return render(request, "admin/annotation/campaign/import.html", {
            **self.admin_site.each_context(request), "form": form, "file_errors": file_errors,
            "opts": self.model._meta, "title": "Import a campaign",
        })


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
