"""Turning stored results into what pages show: formatted numbers, chart rows, the sections every family shares."""
