"""Researcher API serializers."""
from datetime import datetime

from rest_framework import serializers

from annotation.models import Campaign
from annotation.protocols import importable_protocol_choices
from annotation.services.judgment_import import FORMAT_TEXT_OPTIONS, JUDGMENT_FORMATS

from .models import CampaignResults, WorkerResult


class CampaignSerializer(serializers.ModelSerializer):
    counts = serializers.SerializerMethodField()
    # Both are null when the campaign has no study / is not a later stage of a task (the schema says so).
    study = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)
    results_computed_at = serializers.SerializerMethodField()
    crowd_link = serializers.SerializerMethodField()
    stage_input = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)
    stages = serializers.SerializerMethodField()
    active_entry_limits = serializers.SerializerMethodField()

    class Meta:
        model = Campaign
        fields = [
            "slug", "name", "protocol", "status", "analysis_only", "source_language", "target_language",
            "statement", "redundancy", "seed", "hit_size", "qc_test", "qc_threshold", "hit_timeout_minutes",
            "payment_per_hit", "options", "study", "created_at", "counts", "results_computed_at", "crowd_link",
            "stage_name", "stage_input", "stages", "entry_limits", "active_entry_limits",
        ]
        read_only_fields = fields

    def get_counts(self, campaign) -> dict:
        return self.context["counts"][campaign.pk]

    def get_results_computed_at(self, campaign) -> datetime | None:
        try:
            return campaign.results.computed_at
        except CampaignResults.DoesNotExist:
            return None

    def get_stages(self, campaign) -> list[dict] | None:
        """A multi-stage task's stages with their progress (docs/api.md §6.2), in the campaign's own view only."""
        view = self.context.get("view")
        if view is None or getattr(view, "action", None) != "retrieve":
            return None
        from annotation.services.stages import stage_progress

        return stage_progress(campaign)

    def get_active_entry_limits(self, campaign) -> dict:
        """The crowd entry limits in force (docs/api.md §8.1): `entry_limits` with the deployment's settings."""
        from annotation.services.crowd_links import active_entry_limits

        return active_entry_limits(campaign)

    def get_crowd_link(self, campaign) -> str | None:
        if campaign.analysis_only:
            return None
        request = self.context.get("request")
        path = f"/c/{campaign.slug}/start/?worker_id="
        return request.build_absolute_uri(path) if request else path


class CampaignImportSerializer(serializers.Serializer):
    """The fields of `POST /api/campaigns/` (multipart): the file, its name and protocol, then every import
    option of every protocol (`Protocol.option_fields`), validated by `Protocol.parse_options` as in the
    admin and `manage.py import_campaign`. `settings` is a campaign's settings file (docs/api.md#settings-file):
    its values stand for the options not sent. `validated_data` holds the file, name, protocol, `parsed` and
    `raw` (the option values as submitted, merged with the settings file's; a background import parses them
    again)."""

    file = serializers.FileField()
    name = serializers.CharField(max_length=200)
    protocol = serializers.ChoiceField(choices=[], required=False,
                                       help_text="Required unless the settings file gives it.")
    settings = serializers.FileField(required=False, help_text="A campaign's settings file (JSON), as "
                                     "GET /api/campaigns/<slug>/settings/ exports it; options sent beside it win.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["protocol"].choices = importable_protocol_choices()

    def get_fields(self):
        from .import_fields import import_option_fields

        return {**super().get_fields(), **import_option_fields()}

    def validate(self, attrs):
        from annotation.services.campaign_settings import SettingsFileError, combine, read_settings

        from .import_fields import parse_raw, submitted_options

        try:
            settings = read_settings(attrs["settings"]) if attrs.get("settings") else None
            protocol, raw = combine(attrs.get("protocol"), submitted_options(attrs, self.initial_data), settings)
        except SettingsFileError as exc:
            raise serializers.ValidationError({"settings": [str(exc)]}) from None
        if not protocol:
            raise serializers.ValidationError({"protocol": ["This field is required."]})
        return {"file": attrs["file"], "name": attrs["name"], "protocol": protocol,
                "parsed": parse_raw(protocol, raw), "raw": raw}


class JudgmentImportSerializer(serializers.Serializer):
    """The fields of `POST /api/campaigns/import-judgments/` (multipart), as for `manage.py import_judgments`."""

    file = serializers.FileField()
    format = serializers.ChoiceField(choices=[])
    name = serializers.CharField(max_length=200)
    protocol = serializers.CharField(required=False)
    systems = serializers.CharField(required=False, help_text="pairwise-csv: the two systems compared, 'A,B'.")
    study = serializers.CharField(required=False, max_length=200,
                                  help_text="The study the campaign belongs to: your own of that name, or one shared "
                                            "with you, else a new one of yours.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["format"].choices = sorted(JUDGMENT_FORMATS)
        for name, text in FORMAT_TEXT_OPTIONS.items():
            self.fields[name] = serializers.CharField(required=False, max_length=200, help_text=text)


class WorkerResultSerializer(serializers.ModelSerializer):
    """A worker's quality control: the columns of `workers/`, the page's table, its CSV and the admin."""

    class Meta:
        model = WorkerResult
        fields = ["worker", "hits", "judgments", "pairs", "test", "p_value", "reliable", "mean_seconds", "mean_raw",
                  "sd_raw", "constant", "repeat_pairs", "assumption_a_p", "assumption_a_holds"]
