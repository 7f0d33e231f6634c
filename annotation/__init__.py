"""Campaigns, their items and HITs, annotators and the judgments they make."""
