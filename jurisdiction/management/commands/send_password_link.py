"""A new link to set the password of a municipal staff account (jurisdiction.accounts): when
the first one expired or never arrived."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q

from jurisdiction.accounts import send_password_link
from jurisdiction.models import StaffRole


class Command(BaseCommand):
    help = (
        "Envia por e-mail um novo link para a pessoa da equipe municipal definir a senha (o "
        "anterior venceu ou não chegou). Quem roda o comando não fica sabendo a senha."
    )

    def add_arguments(self, parser):
        parser.add_argument("account", metavar="USUARIO_OU_EMAIL")
        parser.add_argument(
            "--show-link",
            action="store_true",
            help="mostra também o link (para entregá-lo por outro meio, só à própria pessoa)",
        )

    def handle(self, *args, **options):
        account = options["account"].strip()
        users = list(
            get_user_model()
            .objects.filter(Q(username=account) | Q(email__iexact=account))
            .order_by("pk")[:2]
        )
        if not users:
            raise CommandError(f"Não há conta com o usuário ou e-mail “{account}”.")
        if len(users) > 1:
            raise CommandError(f"Há mais de uma conta com “{account}”: informe o usuário.")
        user = users[0]
        if not user.is_active:
            raise CommandError(f"A conta “{user.get_username()}” está desativada.")
        if not user.email:
            raise CommandError(f"A conta “{user.get_username()}” não tem e-mail.")
        roles = StaffRole.objects.filter(user=user).select_related("municipality")
        if not roles:
            raise CommandError(
                f"A conta “{user.get_username()}” não tem papel municipal: este comando é para "
                "a equipe dos municípios."
            )
        held = "; ".join(sorted(f"{r.get_role_display()} em {r.municipality}" for r in roles))
        link = send_password_link(
            user, f"Foi pedido um novo link para a sua conta do CTR ({held})."
        )
        self.stdout.write(
            f"Link enviado a {user.email} (vale até {link.expires_text}; a senha atual, se "
            "houver, vale até a nova ser definida)."
        )
        if options["show_link"]:
            self.stdout.write(f"Link (entregue só à própria pessoa): {link.url}")
