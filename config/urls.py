from django.contrib import admin
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import TemplateView
from drf_spectacular.views import SpectacularAPIView

from .docs import document, index, sample


def favicon(request):
    """The icon a browser asks for by itself at /favicon.ico on every site: without it each first visit logs a
    404 in the console. A temporary redirect, as the static file's hashed name changes between releases."""
    return redirect(static("img/favicon.svg"))


# The annotators' routes come first: their JSON API is the busiest path, and Django tries patterns in order.
urlpatterns = [
    path("", TemplateView.as_view(template_name="home.html"), name="home"),
    path("", include("annotation.urls")),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),  # public: SPECTACULAR_SETTINGS
    # The campaign API first: evaluation's results share `/api/campaigns/<slug>/` and end in a catch-all.
    path("api/", include("annotation.api.urls")),
    path("api/", include("evaluation.urls")),
    path("results/", include("evaluation.page_urls")),
    path("docs/", index, name="docs-index"),
    path("docs/samples/<slug:name>.jsonl", sample, name="docs-sample"),
    path("docs/<slug:name>/", document, name="docs"),
    path("favicon.ico", favicon, name="favicon"),
]

handler400 = "config.errors.bad_request"
handler404 = "config.errors.not_found"
