"""What a campaign's file brings, models of the annotation app (imported into annotation.models): its documents,
their segments (source, reference, instructions, media), the systems and each system's output of a segment
(docs/api.md §2)."""
from django.db import models


class Document(models.Model):
    campaign = models.ForeignKey("annotation.Campaign", on_delete=models.CASCADE, related_name="documents")
    doc_id = models.CharField(max_length=200)
    position = models.PositiveIntegerField()
    domain = models.CharField(max_length=100, blank=True, help_text="The document's domain (news, speech, …), "
                              "from the campaign file's optional `domain`; statistics per domain use it.")
    instructions = models.TextField(blank=True, help_text="What the systems were told for the whole document "
                                    "(the campaign file's `document_instructions`, docs/api.md §2).")
    media = models.JSONField(default=dict, null=True, blank=True, help_text="The media its screens show, read with "
                             "the item (annotation/building/media_payload.py): {} or {document, segments, seg_ids}.")

    class Meta:
        ordering = ["campaign", "position"]
        constraints = [models.UniqueConstraint(fields=["campaign", "doc_id"], name="document_unique_id")]

    def __str__(self):
        return self.doc_id


class Segment(models.Model):
    campaign = models.ForeignKey("annotation.Campaign", on_delete=models.CASCADE, related_name="segments")
    document = models.ForeignKey("annotation.Document", on_delete=models.CASCADE, related_name="segments")
    seg_id = models.IntegerField()
    source = models.TextField()
    reference = models.TextField(blank=True)
    instructions = models.TextField(blank=True, help_text="What the systems were told for this item (register, "
                                    "format, terminology, length): the line's `instructions`, else its document's; "
                                    "shown to judges beside the source.")
    media = models.JSONField(default=list, null=True, blank=True, help_text="Its line's `media`: [{id, kind, src, "
                             "alt, caption}] (docs/api.md §2.1).")

    class Meta:
        ordering = ["document__position", "seg_id"]
        constraints = [models.UniqueConstraint(fields=["document", "seg_id"], name="segment_unique_id")]

    def __str__(self):
        return f"{self.document_id}:{self.seg_id}"


class System(models.Model):
    campaign = models.ForeignKey("annotation.Campaign", on_delete=models.CASCADE, related_name="systems")
    name = models.CharField(max_length=200)

    class Meta:
        ordering = ["campaign", "name"]
        constraints = [models.UniqueConstraint(fields=["campaign", "name"], name="system_unique_name")]

    def __str__(self):
        return self.name


class SystemOutput(models.Model):
    campaign = models.ForeignKey("annotation.Campaign", on_delete=models.CASCADE, related_name="outputs")
    segment = models.ForeignKey("annotation.Segment", on_delete=models.CASCADE, related_name="outputs")
    system = models.ForeignKey("annotation.System", on_delete=models.CASCADE, related_name="outputs")
    text = models.TextField()
    spans = models.JSONField(null=True, blank=True, help_text="Error spans marked in advance (e.g. by a quality-"
                             "estimation model), from the campaign file's `error_spans`; the error-span screens show "
                             "them pre-marked.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["segment", "system"], name="output_unique_per_system")]

    def __str__(self):
        return f"{self.system_id}@{self.segment_id}"
