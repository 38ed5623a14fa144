"""What-if: the Núcleo map pages with the municipality field of the filter form built with a
semi-join (EXISTS) instead of a join over every CTR plus DISTINCT — the change proposed in
docs/performance.md, applied here in memory only (maps/nucleo_forms.py is not modified).

    python -m bench.nucleo_form_fix [--runs 7]

Runs on the bench database as it is (run `python -m bench` first for the data).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time


def proposed_queryset():
    from django.db.models import Exists, OuterRef, Q

    from ctr.models import CTR
    from pev_network.models import Municipality, ReceivingFacility

    facilities = ReceivingFacility.objects.filter(municipality=OuterRef("pk"))
    ctrs = CTR.objects.filter(municipality=OuterRef("pk"))
    return (
        Municipality.objects.defer("boundary")
        .filter(Q(Exists(facilities)) | Q(Exists(ctrs)))
        .order_by("name")
    )


def measure_pages(state, runs: int) -> list[tuple[str, int, float, float, float]]:
    from . import nucleo_map

    rows = []
    for case in nucleo_map.cases():
        if case.public:
            continue
        nucleo_map._get(state.nucleo, case.url)
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            response = nucleo_map._get(state.nucleo, case.url)
            times.append(time.perf_counter() - started)
        rows.append(
            (case.label, len(response.content), statistics.median(times), min(times), max(times))
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.nucleo_form_fix")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)

    from .database import bench_url, configure_django, ensure_database

    url = bench_url()
    ensure_database(url)
    configure_django(url)

    from ctr import synthetic
    from maps import nucleo_forms

    from . import nucleo_map

    print(f"CTRs sintéticos no banco: {synthetic.counts()['CTRs']}")
    state = nucleo_map.setup()
    results = {"como está": measure_pages(state, args.runs)}
    original = nucleo_forms.NucleoFilterForm.__init__

    def patched(self, *a, **kw):
        original(self, *a, **kw)
        self.fields["municipality"].queryset = proposed_queryset()

    nucleo_forms.NucleoFilterForm.__init__ = patched
    try:
        results["com EXISTS"] = measure_pages(state, args.runs)
    finally:
        nucleo_forms.NucleoFilterForm.__init__ = original
    print("| página | formulário | HTML (bytes) | mediana | mín | máx |")
    print("|---|---|---:|---:|---:|---:|")
    for variant, rows in results.items():
        for label, size, median, low, high in rows:
            print(
                f"| {label} | {variant} | {size} | {median * 1000:.0f} ms "
                f"| {low * 1000:.0f} ms | {high * 1000:.0f} ms |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
