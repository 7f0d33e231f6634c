"""Researcher-facing views: the REST API (`api`) and the server-rendered results pages (`pages`)."""
