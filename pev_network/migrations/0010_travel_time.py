import django.core.validators
from decimal import Decimal
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("pev_network", "0009_provisional_sync_hours"),
    ]

    operations = [
        migrations.AddField(
            model_name="municipality",
            name="travel_check_enabled",
            field=models.BooleanField(
                default=True,
                help_text="Desligado, o recebimento não compara o tempo desde a partida com a distância (para quem ainda emite o CTR fora da hora da saída da carga).",
                verbose_name="conferir o tempo de viagem no recebimento",
            ),
        ),
        migrations.AddField(
            model_name="municipality",
            name="travel_detour_factor",
            field=models.DecimalField(
                decimal_places=2,
                default=Decimal("1.40"),
                help_text="Quanto o caminho pelas ruas é mais longo que a linha reta da origem à área de destino (1,4: o alto da faixa de 1,2 a 1,4 medida em redes viárias).",
                max_digits=4,
                validators=[django.core.validators.MinValueValidator(Decimal("1"))],
                verbose_name="viagem: fator de desvio (estrada ÷ linha reta)",
            ),
        ),
        migrations.AddField(
            model_name="municipality",
            name="travel_max_speed_kmh",
            field=models.DecimalField(
                decimal_places=1,
                default=Decimal("80.0"),
                help_text="Mais rápido que isto em média, da partida ao recebimento, não é possível (80 km/h: o maior limite urbano do CTB, art. 61 §1 I a).",
                max_digits=5,
                validators=[django.core.validators.MinValueValidator(Decimal("1"))],
                verbose_name="viagem: velocidade média máxima (km/h)",
            ),
        ),
        migrations.AddField(
            model_name="municipality",
            name="travel_min_speed_kmh",
            field=models.DecimalField(
                decimal_places=1,
                default=Decimal("5.0"),
                help_text="Mais lento que isto em média (além da folga abaixo) sugere um desvio no caminho (5 km/h: o passo de quem anda; um caminhão no trânsito faz bem mais).",
                max_digits=5,
                validators=[django.core.validators.MinValueValidator(Decimal("0.1"))],
                verbose_name="viagem: velocidade média mínima (km/h)",
            ),
        ),
        migrations.AddField(
            model_name="municipality",
            name="travel_slack_minutes",
            field=models.PositiveIntegerField(
                default=60,
                help_text="Somada ao tempo mais lento: a espera no portão, a pesagem e a conferência não são desvio.",
                verbose_name="viagem: folga para carga, fila e pesagem (min)",
            ),
        ),
    ]
