"""The results side of the researcher API, under `api/` after annotation's campaign routes (config/urls.py): both
serve `/api/campaigns/<slug>/…`, and this router's root view (`/api/`) lists them together."""
from django.urls import include, path
from rest_framework.routers import DefaultRouter

from .views.adaptive import urlpatterns as adaptive_urls
from .views.api import CampaignResultsViewSet
from .views.studies import StudyViewSet

router = DefaultRouter()
# The same prefix and basename as annotation's campaign view set: the root view links "campaigns" to its list.
router.register("campaigns", CampaignResultsViewSet, basename="campaign")
router.register("studies", StudyViewSet, basename="study")

urlpatterns = [
    path("", include(router.urls)),
    path("campaigns/<slug:slug>/tables/<slug:name>/", CampaignResultsViewSet.as_view({"get": "table"}),
         name="campaign-table"),
    *adaptive_urls,
    # After the router's routes: any other table of a campaign is its family's (significance, pairwise, …).
    path("campaigns/<slug:slug>/<slug:endpoint>/", CampaignResultsViewSet.as_view({"get": "family_result"}),
         name="campaign-family-result"),
]
