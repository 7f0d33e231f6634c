"""The researcher API's campaign side (docs/api.md §4-§6): campaigns, their imports, lifecycle, sharing, blocking,
stages and judgment export. The evaluation app serves the results under the same `/api/campaigns/<slug>/`."""
