"""The researchers' results pages: `path("results/", include("evaluation.page_urls"))` in config/urls.py."""
from django.urls import path

from .views import pages

app_name = "results"

urlpatterns = [
    path("", pages.results_index, name="index"),
    # Before the campaign patterns, so that "compare" is never read as a campaign slug.
    path("compare/", pages.compare, name="compare"),
    path("compare.csv", pages.compare_csv, name="compare-csv"),
    path("<slug:slug>/", pages.campaign_results, name="campaign"),
    path("<slug:slug>/recompute/", pages.recompute, name="recompute"),
    path("<slug:slug>/<str:table>.csv", pages.table_csv, name="csv"),
]
