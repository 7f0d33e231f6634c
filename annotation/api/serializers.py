"""The campaign API's serializers: a campaign as the API shows it, the import forms, and the bodies of the
campaign actions (status, block, share)."""
from datetime import datetime

from rest_framework import serializers

from ..extensions import results_source
from ..models import Campaign
from ..protocols import importable_protocol_choices
from ..services.judgment_import import FORMAT_TEXT_OPTIONS, JUDGMENT_FORMATS


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
        # From the installed results source (annotation/extensions.py); a docstring would show in the schema.
        return results_source().computed_at(campaign)

    def get_stages(self, campaign) -> list[dict] | None:
        """A multi-stage task's stages with their progress (docs/api.md §6.2), in the campaign's own view only."""
        view = self.context.get("view")
        if view is None or getattr(view, "action", None) != "retrieve":
            return None
        from ..services.stages import stage_progress

        return stage_progress(campaign)

    def get_active_entry_limits(self, campaign) -> dict:
        """The crowd entry limits in force (docs/api.md §8.1): `entry_limits` with the deployment's settings."""
        from ..services.crowd_links import active_entry_limits

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

    file = serializers.FileField(help_text="The campaign file (JSON Lines), or a .zip bundle of it and its media "
                                           "(docs/api.md §2.1).")
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
        from ..services.campaign_settings import SettingsFileError, combine, read_settings
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
        from .import_fields import analysis_option_fields

        self.fields.update(analysis_option_fields())

    def validate(self, attrs):
        """The statistics options sent, checked by their declaration (the protocol's own check follows the file)."""
        from .import_fields import check_analysis

        attrs["analysis"] = check_analysis(attrs, self.initial_data)
        return attrs


class OptionsChange(serializers.Serializer):
    """`PATCH /api/campaigns/<slug>/`: the statistics options to change, by name (null: back to the default)."""

    options = serializers.DictField(allow_empty=False)


class StatusChange(serializers.Serializer):
    status = serializers.ChoiceField(choices=["active", "paused", "closed"])


class WorkerRef(serializers.Serializer):
    """A worker by external id (DRF's CharField refuses NUL bytes and lone surrogates)."""

    worker = serializers.CharField(max_length=255)


class ShareChange(serializers.Serializer):
    """Users (by user name) and groups (by name) to share a campaign with, or to take the share back from."""

    # 500 + 500: a form body holds at most DATA_UPLOAD_MAX_NUMBER_FIELDS (1,000) fields.
    users = serializers.ListField(child=serializers.CharField(max_length=150), required=False, default=list,
                                  max_length=500)
    groups = serializers.ListField(child=serializers.CharField(max_length=150), required=False, default=list,
                                   max_length=500)

    def validate(self, attrs):
        if not attrs["users"] and not attrs["groups"]:
            raise serializers.ValidationError("name users, groups or both")
        return attrs
