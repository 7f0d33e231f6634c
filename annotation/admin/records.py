"""The admins of what campaigns hold (documents, segments, systems, HITs, assignments, judgments) and of workers:
only the rows of the user's campaigns."""

from django.contrib import admin, messages

from ..models import (
    Annotator,
    Assignment,
    Campaign,
    Document,
    Hit,
    HitItem,
    Judgment,
    Segment,
    System,
)
from ..ownership import is_superuser
from ..services import assignment as assigning
from .campaign_page import visible_annotators


class CampaignFilter(admin.SimpleListFilter):
    """By campaign, offering only the user's campaigns (the same query parameter as Django's own filter)."""

    title = "campaign"
    parameter_name = "campaign__id__exact"

    def lookups(self, request, model_admin):
        return [(c.pk, c.name) for c in Campaign.objects.visible_to(request.user).only("name").order_by("-created_at")]

    def queryset(self, request, queryset):
        return queryset.filter(campaign_id=self.value()) if self.value() else queryset


class InVisibleCampaigns(admin.ModelAdmin):
    """What campaigns hold: the rows of the user's campaigns only, and only those campaigns (and their rows) to
    pick from in a form."""

    list_filter = [CampaignFilter]

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if is_superuser(request.user):
            return queryset
        return queryset.filter(campaign_id__in=Campaign.objects.visible_to(request.user).values("pk"))

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        model = db_field.related_model
        if not is_superuser(request.user):
            campaigns = Campaign.objects.visible_to(request.user).values("pk")
            if model is Campaign:
                kwargs["queryset"] = Campaign.objects.filter(pk__in=campaigns)
            elif any(field.name == "campaign" for field in model._meta.fields):
                kwargs["queryset"] = model._default_manager.filter(campaign_id__in=campaigns)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Document)
class DocumentAdmin(InVisibleCampaigns):
    list_display = ["doc_id", "campaign", "position"]


@admin.register(Segment)
class SegmentAdmin(InVisibleCampaigns):
    list_display = ["document", "seg_id", "campaign"]
    list_select_related = ["document", "campaign"]


@admin.register(System)
class SystemAdmin(InVisibleCampaigns):
    list_display = ["name", "campaign"]


class HitItemInline(admin.TabularInline):
    model = HitItem
    fields = ["position", "set_index", "item_type", "segment", "output", "text", "partner_position"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Hit)
class HitAdmin(InVisibleCampaigns):
    list_display = ["number", "campaign", "size"]
    inlines = [HitItemInline]


@admin.register(Annotator)
class AnnotatorAdmin(admin.ModelAdmin):
    list_display = ["__str__", "source", "native_language", "country", "created_at"]
    search_fields = ["external_id", "user__username"]

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        return queryset if is_superuser(request.user) else queryset.filter(pk__in=visible_annotators(request.user))


@admin.register(Assignment)
class AssignmentAdmin(InVisibleCampaigns):
    list_display = ["annotator", "campaign", "hit", "status", "position", "started_at", "completed_at"]
    list_filter = [CampaignFilter, "status"]
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
class JudgmentAdmin(InVisibleCampaigns):
    list_display = ["annotator", "campaign", "item", "score", "choice", "seconds", "created_at"]
    list_select_related = ["annotator", "campaign", "item"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

