"""Annotator-facing views: crowd entry, in-house entry, the rating page and its JSON API."""
