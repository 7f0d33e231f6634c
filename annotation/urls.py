from django.urls import path

from .views import api, media, pages

app_name = "annotation"

urlpatterns = [
    path("c/<slug:slug>/start/", pages.crowd_start, name="crowd-start"),
    path("c/<slug:slug>/try/", pages.try_as_worker, name="crowd-try"),
    path("annotate/", pages.annotate, name="annotate"),
    path("annotate/<slug:slug>/start/", pages.annotate_start, name="annotate-start"),
    path("hit/<str:token>/", pages.hit_page, name="hit"),
    path("api/hit/<str:token>/", api.hit_state, name="hit-api"),
    path("api/hit/<str:token>/media/<str:key>/", media.medium, name="hit-media"),
]
