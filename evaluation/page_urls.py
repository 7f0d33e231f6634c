"""The researchers' results pages: `path("results/", include("evaluation.page_urls"))` in config/urls.py."""
from django.urls import path

from .views import compare, downloads, power, results, stability, studies

app_name = "results"

urlpatterns = [
    path("", results.results_index, name="index"),
    # Before the campaign patterns, so that "compare" is never read as a campaign slug.
    path("compare/", compare.compare, name="compare"),
    path("compare.csv", compare.compare_csv, name="compare-csv"),
    path("study/<slug:slug>/", studies.study_page, name="study"),
    path("<slug:slug>/", results.campaign_results, name="campaign"),
    path("<slug:slug>/recompute/", results.recompute, name="recompute"),
    path("<slug:slug>/power/", power.power_page, name="power"),
    path("<slug:slug>/stability/", stability.run_stability, name="stability"),
    path("<slug:slug>/<str:table>.csv", downloads.table_csv, name="csv"),
    path("<slug:slug>/<str:table>.tex", downloads.table_latex, name="latex"),
]
