"""Web pages of the CTR for transporters and facility operators, sign-in and the rule
catalogue (pt-BR paths). The printable PDF is /ctrs/<number>/pdf/ (ctr.document_urls)."""

from django.urls import path

from . import (
    fleet_views,
    issue_views,
    onward_views,
    reception_views,
    views,
)
from .field import correction_views, offline_views, template_views

app_name = "ctr_web"

urlpatterns = [
    path("entrar/", views.SignInView.as_view(), name="login"),
    path("sair/", views.SignOutView.as_view(), name="logout"),
    path("painel/", views.dashboard, name="dashboard"),
    path("regras/", views.rule_catalogue, name="rules"),
    # Transporters
    path("transportador/ctrs/", views.ctr_list, name="ctr-list"),
    path("transportador/ctrs/novo/", issue_views.ctr_new, name="ctr-new"),
    path("transportador/ctrs/importar/", issue_views.ctr_import, name="ctr-import"),
    path(
        "transportador/ctrs/importar/exemplo.csv",
        issue_views.ctr_import_example,
        name="ctr-import-example",
    ),
    path("transportador/ctrs/<str:number>/", views.ctr_detail, name="ctr-detail"),
    path("transportador/ctrs/<str:number>/cancelar/", views.ctr_cancel, name="ctr-cancel"),
    path("transportador/veiculos/", fleet_views.vehicles, name="vehicles"),
    # The transporter's pages as an installable app, its worker scoped to
    # /transportador/ by where it is served.
    path("transportador/app.webmanifest", offline_views.manifest, name="app-manifest"),
    path("transportador/sw.js", offline_views.service_worker, name="service-worker"),
    path(
        "transportador/veiculos/<int:pk>/desativar/",
        fleet_views.vehicle_active,
        {"active": False},
        name="vehicle-deactivate",
    ),
    path(
        "transportador/veiculos/<int:pk>/reativar/",
        fleet_views.vehicle_active,
        {"active": True},
        name="vehicle-reactivate",
    ),
    path("transportador/equipamentos/", fleet_views.equipment, name="equipment"),
    path(
        "transportador/equipamentos/<int:pk>/desativar/",
        fleet_views.equipment_active,
        {"active": False},
        name="equipment-deactivate",
    ),
    path(
        "transportador/equipamentos/<int:pk>/reativar/",
        fleet_views.equipment_active,
        {"active": True},
        name="equipment-reactivate",
    ),
    # Receiving-facility operators
    path("recebimentos/", reception_views.receptions, name="receptions"),
    # Onward CTRs and the stock of the operator's facility
    path("recebimentos/saidas/nova/", onward_views.onward_new, name="onward-new"),
    path("recebimentos/saidas/<str:number>/", onward_views.onward_detail, name="onward-detail"),
    path(
        "recebimentos/saidas/<str:number>/cancelar/",
        onward_views.onward_cancel,
        name="onward-cancel",
    ),
    path("recebimentos/estoque/", onward_views.facility_stock, name="facility-stock"),
    path(
        "recebimentos/estoque/beneficiamento/", onward_views.processing_new, name="processing-new"
    ),
    path(
        "recebimentos/<str:number>/confirmar/",
        reception_views.reception_action,
        {"action": "receive"},
        name="reception-receive",
    ),
    path(
        "recebimentos/<str:number>/recusar/",
        reception_views.reception_action,
        {"action": "refuse"},
        name="reception-refuse",
    ),
    # CTR templates
    path("transportador/modelos/", template_views.template_list, name="template-list"),
    path("transportador/modelos/novo/", template_views.template_new, name="template-new"),
    path(
        "transportador/modelos/<int:pk>/emitir/",
        template_views.template_issue,
        name="template-issue",
    ),
    path(
        "transportador/modelos/<int:pk>/editar/", template_views.template_edit, name="template-edit"
    ),
    path(
        "transportador/modelos/<int:pk>/excluir/",
        template_views.template_delete,
        name="template-delete",
    ),
    path(
        "transportador/ctrs/<str:number>/modelo/",
        template_views.ctr_save_as_template,
        name="ctr-save-template",
    ),
    # Corrections after reception: ctr.field.correction_views
    path("ctrs/<str:number>/correcoes/", correction_views.corrections_page, name="corrections"),
    path(
        "ctrs/<str:number>/correcoes/propor/",
        correction_views.correction_propose,
        name="correction-propose",
    ),
    *(
        path(
            f"correcoes/<int:pk>/{slug}/",
            correction_views.correction_action,
            {"action": action},
            name=f"correction-{action}",
        )
        for action, slug in (
            ("approve", "aprovar"),
            ("refuse", "recusar"),
            ("escalate", "enviar-ao-nucleo"),
            ("decide", "decidir"),
        )
    ),
    path("nucleo/correcoes/", correction_views.nucleo_queue, name="nucleo-corrections"),
]
