from django.urls import include, path
from rest_framework.routers import DefaultRouter

from .views.adaptive import urlpatterns as adaptive_urls
from .views.api import CampaignViewSet
from .views.imports import ImportJobView
from .views.studies import StudyViewSet

router = DefaultRouter()
router.register("campaigns", CampaignViewSet, basename="campaign")
router.register("studies", StudyViewSet, basename="study")

urlpatterns = [
    path("", include(router.urls)),
    path("imports/<uuid:pk>/", ImportJobView.as_view(), name="import-job"),
    path("campaigns/<slug:slug>/tables/<slug:name>/", CampaignViewSet.as_view({"get": "table"}),
         name="campaign-table"),
    *adaptive_urls,
    # After the router's routes: any other table of a campaign is its family's (significance, pairwise, …).
    path("campaigns/<slug:slug>/<slug:endpoint>/", CampaignViewSet.as_view({"get": "family_result"}),
         name="campaign-family-result"),
]
