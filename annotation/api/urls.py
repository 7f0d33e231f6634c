"""The campaign API's routes, under `api/` before the evaluation app's (config/urls.py): the results of a campaign
share its URL prefix (`/api/campaigns/<slug>/systems/`, …) and evaluation's catch-all
`campaigns/<slug>/<endpoint>/` must come after every route here. The API root (`/api/`) is evaluation's router's."""
from django.urls import include, path
from rest_framework.routers import DefaultRouter

from .campaigns import CampaignViewSet
from .imports import ImportJobView

router = DefaultRouter()
router.include_root_view = False
router.register("campaigns", CampaignViewSet, basename="campaign")

urlpatterns = [
    path("", include(router.urls)),
    path("imports/<uuid:pk>/", ImportJobView.as_view(), name="import-job"),
]
