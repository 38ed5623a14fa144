"""Forms of the generator-account pages (pt-BR). They read the fields; generators.accounts
validates what the API validates too (CPF/CNPJ check digits, e-mail, user name, Django's
password validators) and its errors come back onto these fields."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from ctr.documents import normalize_document

from .accounts import registration_municipalities

# The service's field names are the forms' (add_to_form puts an error on its field).
DOCUMENT_HELP = "Só números ou com a pontuação; os dígitos verificadores são conferidos."


def _document_field(label: str = "CPF ou CNPJ") -> forms.CharField:
    return forms.CharField(
        label=label,
        max_length=30,
        help_text=DOCUMENT_HELP,
        widget=forms.TextInput({"autocomplete": "off", "inputmode": "numeric"}),
    )


def _email_field() -> forms.EmailField:
    return forms.EmailField(
        label="E-mail",
        max_length=254,
        widget=forms.EmailInput({"autocomplete": "email"}),
    )


class DocumentMixin:
    """The check digits on the form, so that a wrong CPF/CNPJ shows with the other fields'
    problems in one pass (the service checks again: the API has no form)."""

    def clean_document(self) -> str:
        return normalize_document(self.cleaned_data["document"])


class InvitationForm(DocumentMixin, forms.Form):
    """Who to invite: the generator by CPF/CNPJ, the e-mail the link goes to, and (the Núcleo,
    for a generator not yet registered) its name."""

    document = _document_field("CPF ou CNPJ do gerador")
    email = _email_field()
    name = forms.CharField(
        label="Nome do gerador",
        max_length=200,
        required=False,
        help_text="Só para um gerador ainda não cadastrado; um já cadastrado mantém o seu nome.",
    )

    def __init__(self, *args, can_create: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if not can_create:
            del self.fields["name"]


class NewPasswordMixin(forms.Form):
    username = forms.CharField(
        label="Usuário",
        max_length=150,
        help_text="Letras, números e @ . + - _ (sem espaços). É com ele que você entra.",
        widget=forms.TextInput({"autocomplete": "username", "autocapitalize": "none"}),
    )
    password = forms.CharField(
        label="Senha",
        strip=False,
        help_text="Pelo menos 8 caracteres, não só números, e diferente do usuário e do e-mail.",
        widget=forms.PasswordInput({"autocomplete": "new-password"}),
    )
    password_confirm = forms.CharField(
        label="Repita a senha",
        strip=False,
        widget=forms.PasswordInput({"autocomplete": "new-password"}),
    )

    def clean(self):
        data = super().clean()
        if data.get("password") and data.get("password_confirm") != data["password"]:
            self.add_error("password_confirm", ValidationError("As duas senhas não são iguais."))
        return data


class AcceptInvitationForm(NewPasswordMixin):
    pass


class MunicipalityChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj) -> str:
        return f"{obj.name}/{obj.uf}"


class RegistrationForm(DocumentMixin, NewPasswordMixin):
    name = forms.CharField(
        label="Nome ou razão social",
        max_length=200,
        widget=forms.TextInput({"autocomplete": "name"}),
    )
    document = _document_field()
    email = _email_field()
    # The municipality whose Núcleo confirms the registration (where the works are).
    municipality = MunicipalityChoice(
        label="Município",
        queryset=None,
        empty_label="Escolha o município",
        help_text="O Núcleo Permanente de Gestão deste município confere o seu cadastro: "
        "escolha o das suas obras.",
        error_messages={
            "required": "Escolha o município onde o Núcleo vai conferir o seu cadastro.",
            "invalid_choice": "Este município não é atendido pela plataforma: escolha um da lista.",
        },
    )

    field_order = [
        "name", "document", "email", "municipality", "username", "password", "password_confirm",
    ]  # fmt: skip

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        served = registration_municipalities()
        self.fields["municipality"].queryset = served
        first_two = list(served[:2])
        # One municipality served: nothing to choose, it is that one's Núcleo.
        self.only = first_two[0] if len(first_two) == 1 else None
        if self.only is not None:
            self.fields["municipality"].initial = self.only.pk
            self.fields["municipality"].required = False

    def clean_municipality(self):
        return self.cleaned_data.get("municipality") or self.only

    def arguments(self) -> dict:
        """accounts.register's arguments."""
        names = ("name", "document", "email", "username", "password", "municipality")
        return {name: self.cleaned_data[name] for name in names}


class RefuseForm(forms.Form):
    reason = forms.CharField(
        label="Motivo da recusa",
        max_length=1000,
        help_text="Vai no e-mail a quem pediu o cadastro.",
        widget=forms.Textarea({"rows": 3}),
    )
