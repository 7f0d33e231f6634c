"""Media of campaign lines and documents (images, video, audio; docs/api.md §2.1), a model of the annotation app
(imported into annotation.models).

A `MediaItem` is one use of a stored file by a document or one of its segments: the file lives in the "media"
storage (settings.STORAGES; annotation/services/media_import.py writes it), named by its content's hash, so a file
used twice is stored once. Its `key` is the unguessable id of the serving URL `/api/hit/<token>/media/<key>/`,
which is served only to a HIT whose items show the media's document (annotation/views/media.py)."""
import secrets

from django.db import models


def new_media_key() -> str:
    return secrets.token_urlsafe(16)


class MediaItem(models.Model):
    class Kind(models.TextChoices):
        IMAGE = "image", "Image"
        VIDEO = "video", "Video"
        AUDIO = "audio", "Audio"

    campaign = models.ForeignKey("annotation.Campaign", on_delete=models.CASCADE, related_name="media")
    document = models.ForeignKey("annotation.Document", on_delete=models.CASCADE, related_name="media_items")
    seg_id = models.IntegerField(null=True, blank=True, help_text="The segment whose line carries it; empty for "
                                 "the document's own media (`doc_media`).")
    key = models.CharField(max_length=32, unique=True, default=new_media_key, editable=False)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    src = models.CharField(max_length=2000, help_text="Where the campaign file said it was: a path inside the "
                           "bundle, or the http(s) URL it was fetched from once at import.")
    alt = models.CharField(max_length=1000, blank=True)
    caption = models.CharField(max_length=1000, blank=True)
    name = models.CharField(max_length=300, blank=True, help_text="The file's name in the media storage; empty "
                            "for judgments imported from elsewhere (nothing is served).")
    content_type = models.CharField(max_length=40, blank=True)
    size = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["document", "seg_id", "id"]

    def __str__(self):
        return f"{self.kind} {self.src}"
