from __future__ import annotations

from django.urls import path

from webapp.annotation import views

app_name = "annotation"
urlpatterns = [
    path("", views.queue_page, name="queue"),
    path("next/", views.next_item, name="next"),
    path("items/<int:pk>/", views.review, name="review"),
    path("items/<int:pk>/verify/", views.verify_text, name="verify"),
    path("items/<int:pk>/fix/", views.fix_claim, name="fix"),
    path("items/<int:pk>/decide/", views.decide, name="decide"),
    path("undo/", views.undo, name="undo"),
    path("enqueue/", views.enqueue, name="enqueue"),
    path("policy/", views.set_policy, name="policy"),
    path("adjudication/", views.adjudication_list, name="adjudication"),
    path("adjudication/<int:pk>/", views.adjudicate, name="adjudicate"),
    path("adjudication/<int:pk>/verify/", views.adjudicate_verify, name="adjudicate_verify"),
    path("agreement/", views.stats, name="stats"),
    path("export/", views.export_page, name="export_page"),
    path("export.jsonl", views.export, name="export"),
]
