"""A new campaign's slug: what every creator of campaigns shares (imports, judgment imports, later stages), kept
apart from the import so that the stage builder does not import the importer (which imports the stage builder)."""
from __future__ import annotations

from django.conf import settings
from django.utils.text import slugify

from ..models import Campaign


def unique_slug(name: str) -> str:
    """A slug from `name`, numbered if taken or reserved for a fixed route (RESERVED_CAMPAIGN_SLUGS)."""
    base = slugify(name)[:200] or "campaign"
    slug, n = base, 1
    while slug in settings.RESERVED_CAMPAIGN_SLUGS or Campaign.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug
