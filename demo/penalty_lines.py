"""The demo's table of Lei 3.978/2007 art. 23: fictitious amounts for the demo town.

The published text of the law lost its table (the lines "Redação dada pela Lei nº 4699/2017"
are empty): the lines below name each obligation of the law (code, article, description, who
may be charged, art. 24) with amounts no law gives. The demo confirms them citing the law
that gives the real table, saying in the act and in each line's note that the amounts are
fictitious; no municipality imports them (no shipped CSV with invented
amounts). The tests confirm the same lines with their own act."""

HEADER = "codigo;fundamento_legal;descricao;multa_ufesp;quem_pode_ser_autuado;vigente_desde"

# (code, article, description, fictitious amount in UFESP, who may be charged)
LINES = (
    (
        "INF-01",
        "Lei 3.978/2007 art. 2 §1",
        "Dispor RCC ou volumosos em local proibido (bota-fora, encosta, corpo d’água, lote "
        "vago, passeio ou via pública, área não licenciada ou protegida)",
        "100",
        "proprietario, representante, motorista, transportadora",
    ),
    (
        "INF-02",
        "Lei 3.978/2007 art. 13",
        "Transportar RCC ou volumosos sem cadastro de transportador",
        "50",
        "motorista, transportadora",
    ),
    (
        "INF-03",
        "Lei 3.978/2007 art. 13 p.ú.",
        "Destinar resíduos a área não licenciada ou não comprovar a destinação ao contratante",
        "80",
        "motorista, transportadora",
    ),
    (
        "INF-04",
        "Lei 3.978/2007 art. 3 VI, art. 13 p.ú.",
        "Transportar carga sem o CTR correspondente",
        "30",
        "motorista, transportadora",
    ),
    (
        "INF-05",
        "Lei 3.978/2007 art. 12 §4 II",
        "Usar chapas ou dispositivos que elevem a capacidade volumétrica da caçamba",
        "20",
        "proprietario, representante, motorista, transportadora",
    ),
    (
        "INF-06",
        "Lei 3.978/2007 art. 12 §4 I",
        "Usar caçamba ou equipamento de coleta para resíduos que não sejam RCC ou volumosos",
        "20",
        "proprietario, representante",
    ),
    (
        "INF-07",
        "Lei 3.978/2007 art. 7",
        "Descarregar no PEV resíduos domiciliares não inertes, industriais ou de serviços de saúde",
        "50",
        "proprietario, motorista, transportadora",
    ),
    (
        "INF-08",
        "Lei 3.978/2007 art. 12 §1-2",
        "Descarregar no PEV mais de 1 m³ por descarga",
        "30",
        "proprietario, motorista, transportadora",
    ),
    (
        "INF-09",
        "Lei 3.978/2007 art. 14 §1",
        "Operar área de recepção de resíduos sem licença",
        "150",
        "area_de_recepcao",
    ),
    (
        "INF-10",
        "Lei 3.978/2007 art. 14 §6",
        "Receber em área de recepção resíduos domiciliares, industriais ou de serviços de saúde",
        "100",
        "area_de_recepcao",
    ),
    (
        "INF-11",
        "Lei 3.978/2007 art. 9",
        "Grande gerador sem Projeto de Gerenciamento de Resíduos ou com transportador ou "
        "destino não licenciado",
        "100",
        "proprietario, representante",
    ),
    (
        "INF-12",
        "Lei 3.978/2007 art. 14 §5, art. 18",
        "Deixar de triar integralmente os resíduos recebidos",
        "50",
        "area_de_recepcao",
    ),
)


def table_csv(since: str = "09/11/2007") -> bytes:
    """LINES as the CSV of fiscalization.penalty_table.import_table, in force from `since`."""
    rows = [";".join([*line, since]) for line in LINES]
    return "\r\n".join([HEADER, *rows, ""]).encode()
