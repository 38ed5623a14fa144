"""The rule checked at issue of a provisional CTR, issued offline on the driver's phone
(ctr/field/offline.py): sent within the municipality's limit."""

from __future__ import annotations

from .catalogue import Message, Severity, breach, rule
from .drafts import CTRDraft


# The offline provisional CTR (ctr/field/offline.py).
@rule(
    "PROVISIONAL_SYNC_LATE",
    Severity.WARNING,
    "Lei 3.978/2007 art. 3 VI, art. 13",
    "CTR provisório (emitido sem conexão) enviado dentro do prazo do município",
    message=Message(
        "O CTR provisório {number} chegou {hours:decimal} h depois da saída, além do prazo "
        "de {limit} h do município para enviar um CTR emitido sem conexão."
    ),
    not_in_bulk="uma linha do CSV não tem número provisório nem hora de saída: a importação "
    "não traz CTRs guardados num aparelho sem conexão",
)
def provisional_sync_late(ctr: CTRDraft):
    """O CTR é o documento do transportador sobre cada carga (art. 3 VI), e o transportador
    está submetido à ação gestora do Poder Público (art. 13): um CTR guardado no aparelho por
    falta de conexão fica fora do controle até chegar ao sistema. A lei não fixa o prazo; é um
    parâmetro do município (Município: prazo para sincronizar, 24 h por padrão)."""
    if ctr.provisional_number and ctr.provisional_late:
        yield breach(
            "provisional_departure_at",
            number=ctr.provisional_number,
            hours=ctr.provisional_hours,
            limit=ctr.provisional_max_hours,
        )
