from django.urls import path

from . import views

urlpatterns = [
    path("", views.landing, name="ogc-landing"),
    path("conformance", views.conformance, name="ogc-conformance"),
    path("collections", views.collections, name="ogc-collections"),
    path("collections/<str:collection_id>", views.collection, name="ogc-collection"),
    path("collections/<str:collection_id>/items", views.items, name="ogc-items"),
    path("collections/<str:collection_id>/items/<str:feature_id>", views.item, name="ogc-item"),
]
