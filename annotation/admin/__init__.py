"""Admin for campaigns and what they hold; campaign files are uploaded from the campaign list.

Each campaign has one page (its change page): status, the annotators' link with a copy button, the
results page and the API, progress, and the actions (publish, pause, close, preview) above its settings.

A researcher sees only the campaigns they own or that are shared with them (superusers: all), and only what those
campaigns hold: every list, page and action starts from `Campaign.objects.visible_to(user)`
(annotation/ownership.py), and someone else's campaign is not found (404).
"""
from . import campaigns, records  # noqa: F401  (register the model admins)
