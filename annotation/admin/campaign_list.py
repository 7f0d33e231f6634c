"""The admin's campaign list: columns that fit a 1280 px screen beside the admin's navigation and filters (issue
23). The name carries the slug under it, the protocol its short name (the long label as a tooltip), progress the
HITs fully done and the places done (one worker finishing a HIT; HITs × redundancy in all: the HIT size and
redundancy in its tooltip), so no row wraps tall and the table does not scroll sideways."""
from django.contrib import admin
from django.utils.html import format_html

from ..services.progress import campaign_counts


class CampaignListColumns:
    """The list's columns, mixed into the campaign admin. `get_changelist_instance` counts the page's progress in
    three grouped queries (services/progress.py), not a query per row."""

    list_display = ["campaign", "protocol_name", "status", "progress", "owner"]
    list_display_links = ["campaign"]

    def get_changelist_instance(self, request):
        changelist = super().get_changelist_instance(request)
        campaigns = list(changelist.result_list)  # evaluates the page's queryset once; its rows are reused
        counts = campaign_counts(campaigns)
        for campaign in campaigns:
            campaign.progress_counts = counts[campaign.pk]
        return changelist

    @admin.display(description="campaign", ordering="name")
    def campaign(self, campaign):
        return format_html('{}<br><code class="slug">{}</code>', campaign.name, campaign.slug)

    @admin.display(description="protocol", ordering="protocol")
    def protocol_name(self, campaign):
        return format_html('<span title="{}">{}</span>', campaign.get_protocol_display(), campaign.protocol)

    @admin.display(description="progress")
    def progress(self, campaign):
        """HITs done of all (done: by as many workers as the redundancy asks) and the places done, which move with
        every finished HIT; then the judgments, HIT size and redundancy."""
        counts = getattr(campaign, "progress_counts", None) or campaign_counts([campaign])[campaign.pk]
        if campaign.analysis_only:
            return f"{counts['judgments']} judgments (imported)"
        return format_html(
            '<span class="line" title="HIT size {}, redundancy {}: {} HITs × {} = {} places, each one worker '
            'finishing a HIT">{} / {} HITs done ·</span> <span class="line">places done {} / {} ·</span> '
            '<span class="line detail">{} judgments</span>', campaign.hit_size, campaign.redundancy,
            counts["hits_total"], campaign.redundancy, counts["places_total"], counts["hits_done"],
            counts["hits_total"], counts["places_done"], counts["places_total"], counts["judgments"])
