"""A municipality's parameters become sets with a start date (MunicipalParameters). Forward,
each municipality's undated figures become its first set, from FIRST_SET_FROM: they governed
every CTR on record. Backward, each municipality gets back the figures of the set in force
today (a later set is lost; an earlier one was already superseded)."""

import datetime

import django.core.validators
import django.db.models.deletion
import pev_network.models
from decimal import Decimal
from django.db import migrations, models


# The fields that move, as they were on Municipality.
MOVED = (
    "small_volume_limit_m3",
    "gps_tolerance_m",
    "received_volume_tolerance_pct",
    "sorting_tolerance_pct",
    "waste_generation_rates",
    "stock_alert_days",
    "open_ctr_alert_hours",
    "large_generator_min_area_m2",
    "generator_confirmation_required",
    "generator_confirmation_hours",
    "worksite_overdue_days",
    "worksite_low_volume_pct",
    "worksite_low_volume_min_elapsed_pct",
    "large_generator_idle_days",
    "travel_check_enabled",
    "travel_detour_factor",
    "travel_max_speed_kmh",
    "travel_min_speed_kmh",
    "travel_slack_minutes",
    "provisional_sync_max_hours",
)
FIRST_SET_FROM = datetime.date(2000, 1, 1)


def not_null(verb: str) -> str:
    columns = ", ".join(f"ALTER COLUMN {name} {verb} NOT NULL" for name in MOVED)
    return f"ALTER TABLE pev_network_municipality {columns}"


def first_sets(apps, schema_editor):
    Municipality = apps.get_model("pev_network", "Municipality")
    MunicipalParameters = apps.get_model("pev_network", "MunicipalParameters")
    MunicipalParameters.objects.bulk_create(
        MunicipalParameters(
            municipality_id=row["id"], valid_from=FIRST_SET_FROM, **{n: row[n] for n in MOVED}
        )
        for row in Municipality.objects.values("id", *MOVED)
    )


def todays_figures(apps, schema_editor):
    Municipality = apps.get_model("pev_network", "Municipality")
    MunicipalParameters = apps.get_model("pev_network", "MunicipalParameters")
    today = datetime.date.today()
    for municipality in Municipality.objects.all():
        sets = MunicipalParameters.objects.filter(municipality_id=municipality.pk)
        in_force = sets.filter(valid_from__lte=today).order_by("-valid_from").first()
        in_force = in_force or sets.order_by("valid_from").first()
        for name in MOVED:
            # A municipality without a set (none is made by bulk_create) gets the defaults.
            value = (
                getattr(in_force, name)
                if in_force is not None
                else Municipality._meta.get_field(name).get_default()
            )
            setattr(municipality, name, value)
        municipality.save(update_fields=MOVED)
    # Every row has its figures again: the columns are required again, as before the sets.
    schema_editor.execute(not_null("SET"))


class Migration(migrations.Migration):
    dependencies = [
        ("pev_network", "0015_ufesp_one_home"),
    ]

    operations = [
        migrations.CreateModel(
            name="MunicipalParameters",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "valid_from",
                    models.DateField(
                        help_text="Os CTRs com data de transporte a partir deste dia seguem estes parâmetros.",
                        verbose_name="vigente desde",
                    ),
                ),
                (
                    "act",
                    models.CharField(
                        blank=True,
                        default="",
                        help_text="A lei, o decreto ou a portaria que fixou estes valores, se houver.",
                        max_length=300,
                        verbose_name="ato que os fixou",
                    ),
                ),
                (
                    "small_volume_limit_m3",
                    models.DecimalField(
                        decimal_places=3,
                        default=Decimal("1.000"),
                        help_text="Lei 3.978/2007 art. 3 X-XI e art. 12 §1-2: até 1 m³ por descarga no PEV.",
                        max_digits=6,
                        validators=[django.core.validators.MinValueValidator(Decimal("0"))],
                        verbose_name="limite de pequeno volume (m³ por descarga)",
                    ),
                ),
                (
                    "gps_tolerance_m",
                    models.DecimalField(
                        decimal_places=1,
                        default=Decimal("15.0"),
                        help_text="Distância máxima entre o ponto de descarga e o polígono da área licenciada.",
                        max_digits=6,
                        validators=[django.core.validators.MinValueValidator(Decimal("0"))],
                        verbose_name="tolerância do GPS (m)",
                    ),
                ),
                (
                    "received_volume_tolerance_pct",
                    models.DecimalField(
                        decimal_places=2,
                        default=Decimal("10.00"),
                        help_text="Diferença admitida entre o volume declarado e o recebido (art. 13 p.ú.).",
                        max_digits=5,
                        validators=[django.core.validators.MinValueValidator(Decimal("0"))],
                        verbose_name="tolerância de volume no recebimento (%)",
                    ),
                ),
                (
                    "sorting_tolerance_pct",
                    models.JSONField(
                        blank=True,
                        default=pev_network.models.default_sorting_tolerance,
                        help_text="Quanto a saída de uma classe pode exceder o recebido dela (art. 3 III).",
                        validators=[pev_network.models.validate_sorting_tolerance],
                        verbose_name="tolerância de triagem por classe (%)",
                    ),
                ),
                (
                    "waste_generation_rates",
                    models.JSONField(
                        blank=True,
                        default=pev_network.models.default_generation_rates,
                        help_text="Por tipo de obra e classe: o estimador do PGRCC (art. 9). Padrão: Pinto (1999), 150 kg/m² a 1 200 kg/m³; ver docs/legal.md.",
                        validators=[pev_network.models.validate_generation_rates],
                        verbose_name="índices de geração de resíduos (m³ por m² construído)",
                    ),
                ),
                (
                    "stock_alert_days",
                    models.PositiveIntegerField(
                        default=90,
                        help_text="Estoque acima de zero por mais dias que isto é alerta: a área de triagem não pode virar bota-fora (art. 3 III, art. 2 §1).",
                        verbose_name="alerta de estoque parado (dias)",
                    ),
                ),
                (
                    "open_ctr_alert_hours",
                    models.PositiveIntegerField(
                        default=48,
                        help_text="CTR não recebido após este prazo é sinal de descarte irregular (art. 2 §1).",
                        verbose_name="alerta de CTR aberto (horas)",
                    ),
                ),
                (
                    "large_generator_min_area_m2",
                    models.DecimalField(
                        decimal_places=2,
                        default=Decimal("0"),
                        help_text="Lei 3.978/2007 art. 9: a obra com alvará e pelo menos esta área construída é de grande gerador e apresenta o PGRCC (0: toda obra com alvará).",
                        max_digits=10,
                        validators=[django.core.validators.MinValueValidator(Decimal("0"))],
                        verbose_name="grande gerador a partir de (m² construídos, com alvará)",
                    ),
                ),
                (
                    "generator_confirmation_required",
                    models.BooleanField(
                        default=False,
                        help_text="Opcional: a Lei 3.978/2007 não exige (o CTR é do transportador, art. 3 VI e art. 13 p.ú.). Ligado, o gerador confirma a saída de cada carga da obra, como no SIGOR de São Paulo, e o CTR sem confirmação vai ao Núcleo após o prazo abaixo.",
                        verbose_name="exigir a confirmação do gerador",
                    ),
                ),
                (
                    "generator_confirmation_hours",
                    models.PositiveIntegerField(
                        default=24,
                        help_text="Horas, desde o início do transporte, para o gerador confirmar a saída da carga; depois o CTR aparece ao Núcleo como não confirmado.",
                        validators=[django.core.validators.MinValueValidator(1)],
                        verbose_name="prazo da confirmação do gerador (horas)",
                    ),
                ),
                (
                    "worksite_overdue_days",
                    models.PositiveIntegerField(
                        default=30,
                        help_text="Obra sem término declarado há mais dias que isto depois do término previsto é alerta (art. 9: o PGRCC descreve uma obra que já devia ter acabado).",
                        verbose_name="obra suspeita: dias além do término previsto",
                    ),
                ),
                (
                    "worksite_low_volume_pct",
                    models.DecimalField(
                        decimal_places=2,
                        default=Decimal("50.00"),
                        help_text="Transportado abaixo desta parte do volume do PGRCC proporcional ao prazo decorrido é alerta de descarte irregular (art. 9 p.ú. I, art. 2 §1).",
                        max_digits=5,
                        validators=[
                            django.core.validators.MinValueValidator(Decimal("0")),
                            django.core.validators.MaxValueValidator(Decimal("100")),
                        ],
                        verbose_name="obra suspeita: transportado abaixo de (% do previsto até a data)",
                    ),
                ),
                (
                    "worksite_low_volume_min_elapsed_pct",
                    models.DecimalField(
                        decimal_places=2,
                        default=Decimal("25.00"),
                        help_text="Antes desta parte do prazo da obra o volume transportado não é comparado.",
                        max_digits=5,
                        validators=[
                            django.core.validators.MinValueValidator(Decimal("0")),
                            django.core.validators.MaxValueValidator(Decimal("100")),
                        ],
                        verbose_name="obra suspeita: volume conferido a partir de (% do prazo)",
                    ),
                ),
                (
                    "large_generator_idle_days",
                    models.PositiveIntegerField(
                        default=30,
                        help_text="Obra ativa de grande gerador sem CTR há mais dias que isto é alerta (art. 9: o resíduo da obra está saindo sem CTR, ou a obra parou sem avisar).",
                        verbose_name="grande gerador sem CTR (dias)",
                    ),
                ),
                (
                    "travel_check_enabled",
                    models.BooleanField(
                        default=True,
                        help_text="Desligado, o recebimento não compara o tempo desde a partida com a distância (para quem ainda emite o CTR fora da hora da saída da carga).",
                        verbose_name="conferir o tempo de viagem no recebimento",
                    ),
                ),
                (
                    "travel_detour_factor",
                    models.DecimalField(
                        decimal_places=2,
                        default=Decimal("1.40"),
                        help_text="Quanto o caminho pelas ruas é mais longo que a linha reta da origem à área de destino (1,4: o alto da faixa de 1,2 a 1,4 medida em redes viárias).",
                        max_digits=4,
                        validators=[django.core.validators.MinValueValidator(Decimal("1"))],
                        verbose_name="viagem: fator de desvio (estrada ÷ linha reta)",
                    ),
                ),
                (
                    "travel_max_speed_kmh",
                    models.DecimalField(
                        decimal_places=1,
                        default=Decimal("80.0"),
                        help_text="Mais rápido que isto em média, da partida ao recebimento, não é possível (80 km/h: o maior limite urbano do CTB, art. 61 §1 I a).",
                        max_digits=5,
                        validators=[django.core.validators.MinValueValidator(Decimal("1"))],
                        verbose_name="viagem: velocidade média máxima (km/h)",
                    ),
                ),
                (
                    "travel_min_speed_kmh",
                    models.DecimalField(
                        decimal_places=1,
                        default=Decimal("5.0"),
                        help_text="Mais lento que isto em média (além da folga abaixo) sugere um desvio no caminho (5 km/h: o passo de quem anda; um caminhão no trânsito faz bem mais).",
                        max_digits=5,
                        validators=[django.core.validators.MinValueValidator(Decimal("0.1"))],
                        verbose_name="viagem: velocidade média mínima (km/h)",
                    ),
                ),
                (
                    "travel_slack_minutes",
                    models.PositiveIntegerField(
                        default=60,
                        help_text="Somada ao tempo mais lento: a espera no portão, a pesagem e a conferência não são desvio.",
                        verbose_name="viagem: folga para carga, fila e pesagem (min)",
                    ),
                ),
                (
                    "provisional_sync_max_hours",
                    models.PositiveIntegerField(
                        db_default=24,
                        default=24,
                        help_text="CTR emitido sem conexão (provisório) que chega ao sistema depois deste prazo desde a saída recebe um aviso (art. 3 VI, art. 13).",
                        verbose_name="CTR provisório: prazo para sincronizar (horas)",
                    ),
                ),
                (
                    "municipality",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="parameter_sets",
                        to="pev_network.municipality",
                        verbose_name="município",
                    ),
                ),
            ],
            options={
                "verbose_name": "parâmetros do município",
                "verbose_name_plural": "parâmetros do município (por vigência)",
                "ordering": ["municipality", "-valid_from"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("municipality", "valid_from"),
                        name="one_parameter_set_per_start_day",
                    )
                ],
            },
        ),
        migrations.RunPython(first_sets, todays_figures),
        # Expand/contract (docs/operations.md): the columns leave Django's state now and the
        # table in the next version's migration, as the version still running during a deploy
        # reads them. Nullable meanwhile, as this version's INSERTs no longer fill them.
        migrations.SeparateDatabaseAndState(
            state_operations=[
            migrations.RemoveField(
                model_name="municipality",
                name="generator_confirmation_hours",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="generator_confirmation_required",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="gps_tolerance_m",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="large_generator_idle_days",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="large_generator_min_area_m2",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="open_ctr_alert_hours",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="provisional_sync_max_hours",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="received_volume_tolerance_pct",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="small_volume_limit_m3",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="sorting_tolerance_pct",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="stock_alert_days",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="travel_check_enabled",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="travel_detour_factor",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="travel_max_speed_kmh",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="travel_min_speed_kmh",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="travel_slack_minutes",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="waste_generation_rates",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="worksite_low_volume_min_elapsed_pct",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="worksite_low_volume_pct",
            ),
            migrations.RemoveField(
                model_name="municipality",
                name="worksite_overdue_days",
            ),
            ],
            database_operations=[
                migrations.RunSQL(not_null("DROP"), reverse_sql=migrations.RunSQL.noop)
            ],
        ),
    ]
