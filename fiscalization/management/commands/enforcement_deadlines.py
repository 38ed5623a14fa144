"""What expires in the enforcement procedure: `manage.py enforcement_deadlines [--days N]`.

Lists notices whose 72 hours end within N days or ended unrepaired (art. 28 §1), notices and
records whose delivery is not registered (no deadline runs), records whose appeal window ends
within N days (Lei 3.190/2013 art. 13), appeals awaiting decision, fines due within N days or
overdue (to Dívida Ativa, art. 36, art. 22 IV), suspensions ending (art. 25 IV), disobeyed
embargoes with their daily fine (art. 31) and seized equipment not yet released (art. 32).

Read-only, except with --apply: facilities whose suspension is over get their licenses back
(a license's status has no end date; run it daily). Exit status 0; 1 on bad arguments.
"""

from __future__ import annotations

import datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from fiscalization import deadlines, enforcement
from pev_network.models import Municipality

SECTIONS = [
    ("notices", "Notificações: prazo de 72 horas para reparar (art. 28 §1)"),
    ("undelivered", "Entrega não registrada (o prazo ainda não corre)"),
    ("appeals", "Autos: prazo de recurso terminando (Lei 3.190/2013 art. 13)"),
    ("appeal_decisions", "Recursos aguardando decisão"),
    ("payments", "Autos: prazo de pagamento da multa (art. 36) e Dívida Ativa (art. 22 IV)"),
    ("suspensions", "Suspensões terminando (art. 25 IV)"),
    ("embargoes", "Embargos descumpridos: multa diária de 1 UFESP (art. 31)"),
    ("seizures", "Equipamentos apreendidos não liberados (art. 32)"),
]


class Command(BaseCommand):
    help = "Lista os prazos do procedimento de fiscalização que vencem ou venceram."

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=7, help="horizonte em dias (padrão: 7)")
        parser.add_argument("--municipality", help="código IBGE do município")
        parser.add_argument("--today", help="data de referência AAAA-MM-DD (padrão: hoje)")
        parser.add_argument(
            "--apply",
            action="store_true",
            help="restabelece as licenças das áreas cuja suspensão terminou",
        )

    def handle(self, *args, **options):
        if options["days"] < 0:
            raise CommandError("--days deve ser zero ou positivo.")
        now = timezone.now()
        if options["today"]:
            try:
                day = datetime.date.fromisoformat(options["today"])
            except ValueError:
                raise CommandError(f"Data inválida: {options['today']} (use AAAA-MM-DD).") from None
            now = deadlines.start_of_day(day) + datetime.timedelta(hours=12)
        municipality = None
        if options["municipality"]:
            municipality = Municipality.objects.filter(ibge_code=options["municipality"]).first()
            if municipality is None:
                raise CommandError(f"Município não encontrado: {options['municipality']}.")
        today = deadlines.local_date(now)
        restored = []
        if options["apply"]:
            restored = enforcement.restore_ended_suspensions(today)
        found = enforcement.expiring(now, options["days"], municipality)
        self.stdout.write(
            f"Prazos da fiscalização em {today:%d/%m/%Y}, próximos {options['days']} dia(s):"
        )
        total = expired = 0
        for key, title in SECTIONS:
            items = found[key]
            if not items:
                continue
            self.stdout.write(f"\n{title}")
            for item in items:
                total += 1
                expired += item.expired
                when = (
                    deadlines.br_deadline(item.when)
                    if isinstance(item.when, datetime.datetime)
                    else f"{item.when:%d/%m/%Y}"
                )
                flag = "VENCIDO  " if item.expired else "         "
                self.stdout.write(
                    f"  {flag}{when}  {item.case.number}  {item.what} — {item.case.offender.name}"
                )
        for penalty in restored:
            self.stdout.write(
                f"\nLicença restabelecida: {penalty.record.case.offender.facility} "
                f"(suspensão até {penalty.ends_on:%d/%m/%Y})"
            )
        self.stdout.write(
            f"\nResumo: {total} item(ns), {expired} vencido(s)"
            + (f", {len(restored)} licença(s) restabelecida(s)." if options["apply"] else ".")
        )
