"""One domain error, translated in one place for the API and one for the pages."""

import pytest
from django.contrib.messages import get_messages
from django.http import HttpResponse
from django.test import RequestFactory
from django.urls import path
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import AllowAny

from config.csv_reader import CSVFileError
from config.errors import DomainError, add_to_form, errors_back_to
from config.middleware import DomainErrorMiddleware
from config.rate_limits import RateLimited
from ctr.errors import CTRError, NotAllowed, RuleViolation, TransitionNotAllowed
from ctr.exports import ExportError
from fiscalization.enforcement import EnforcementError
from fiscalization.intake import IntakeError
from fiscalization.photos import PhotoError, PhotoErrors
from pev_network.boundaries import BoundaryImportError
from pev_network.services import NetworkError


class Refused(DomainError):
    status = 409
    code = "refused"


@api_view(["POST"])
@permission_classes([AllowAny])
def refusing_api(request):
    raise Refused("A carga já foi recebida.", field="received_volume_m3")


@api_view(["POST"])
@permission_classes([AllowAny])
def throttled_api(request):
    raise RateLimited("Muitas denúncias deste endereço: tente de novo em 5 minutos.", 300)


def refusing_page(request):
    raise Refused("A carga já foi recebida.")


@errors_back_to("back-here", "number")
def refusing_action(request, number):
    raise Refused("Não é possível cancelar.")


urlpatterns = [
    path("api-refuses/", refusing_api),
    path("api-throttled/", throttled_api),
    path("page-refuses/", refusing_page),
    path("action/<str:number>/", refusing_action),
    path("back/<str:number>/", lambda request, number: HttpResponse(""), name="back-here"),
]


@pytest.mark.parametrize(
    "error_class",
    [CTRError, RuleViolation, TransitionNotAllowed, NotAllowed, EnforcementError, IntakeError,
     NetworkError, PhotoErrors, RateLimited, BoundaryImportError, CSVFileError, ExportError],
)  # fmt: skip
def test_every_apps_errors_derive_from_the_one_base(error_class):
    assert issubclass(error_class, DomainError)


@pytest.mark.urls(__name__)
def test_the_api_answers_a_domain_error_as_problem_details(client):
    response = client.post("/api-refuses/")
    assert response.status_code == 409
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["detail"] == "A carga já foi recebida."
    assert body["errors"] == [
        {"campo": "received_volume_m3", "mensagem": "A carga já foi recebida."}
    ]
    assert body["title"] == "Conflito com a situação atual"


@pytest.mark.urls(__name__)
def test_a_rate_limit_says_when_to_come_back(client):
    response = client.post("/api-throttled/")
    assert response.status_code == 429
    assert response["Retry-After"] == "300"
    assert "tente de novo em 5 minutos" in response.json()["detail"]


def test_photo_refusals_keep_their_status_and_list():
    too_big = PhotoErrors([PhotoError("a.jpg", "tem mais de 8 MB.", "too_large")])
    assert too_big.status == 413
    mixed = PhotoErrors(
        [PhotoError("a.jpg", "tem mais de 8 MB.", "too_large"), PhotoError("b", "vazio", "empty")]
    )
    assert mixed.status == 400
    assert [e["arquivo"] for e in mixed.problem_errors()] == ["a.jpg", "b"]


@pytest.mark.urls(__name__)
def test_an_action_goes_back_to_its_page_with_the_message(client):
    response = client.post("/action/CTR-1/", follow=True)
    assert response.redirect_chain == [("/back/CTR-1/", 302)]
    assert [str(m) for m in get_messages(response.wsgi_request)] == ["Não é possível cancelar."]


@pytest.mark.urls(__name__)
def test_an_escaped_error_goes_back_to_the_referring_page(client):
    response = client.post("/page-refuses/", HTTP_REFERER="http://testserver/back/X/")
    assert response.status_code == 302
    assert response["Location"] == "http://testserver/back/X/"


@pytest.mark.urls(__name__)
def test_an_escaped_error_never_goes_back_to_itself_or_off_site(client):
    itself = client.post("/page-refuses/", HTTP_REFERER="http://testserver/page-refuses/")
    assert itself["Location"] == "/"
    elsewhere = client.post("/page-refuses/", HTTP_REFERER="https://evil.example/")
    assert elsewhere["Location"] == "/"


def test_the_middleware_leaves_other_exceptions_alone():
    request = RequestFactory().get("/")
    assert DomainErrorMiddleware(lambda r: None).process_exception(request, ValueError()) is None


def test_add_to_form_names_the_field_or_the_form():
    from django import forms

    class Form(forms.Form):
        offender_document = forms.CharField(required=False)

    form = Form({})
    form.is_valid()
    add_to_form(form, DomainError("CPF inválido.", field="document"),
                {"document": "offender_document"})  # fmt: skip
    add_to_form(form, DomainError("Processo encerrado.", field="status"))
    assert form.errors["offender_document"] == ["CPF inválido."]
    assert form.non_field_errors() == ["Processo encerrado."]
