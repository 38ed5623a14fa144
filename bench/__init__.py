"""Benchmarks (`make bench`, `python -m bench`), with their results in docs/performance.md.

They run on a database of their own (``ctr_bench`` on the same server, or
``BENCH_DATABASE_URL``), filled with synthetic data (synthetic/generator.py) at each size; the
demo's database is never touched.

One module per benchmark, listed in BENCHMARKS. A benchmark module has:

- ``NAME`` and ``TITLE``;
- ``setup() -> object``: once, before the first size (users, clients);
- ``run(state, size, reports, runs) -> list[bench.timing.Result]``: the figures at one size;
- ``profile(state, results) -> list[bench.timing.Plan]``: at the largest size, the queries of
  its slowest page and the plans (EXPLAIN ANALYZE) of the slowest;
- optionally ``verdict(results) -> str``: a paragraph for the report (Markdown, pt-BR), e.g.
  whether the targets were met.

``python -m bench.p1_bulk`` (P1, the set-based CSV import) and ``python -m bench.p6_custody``
(P6, the chain of custody with 1M CTRs of which 20 % onward) run beside them, each on a
database of its own (``ctr_bench_p1``, ``ctr_bench_p6``), and write their own sections;
``make bench`` runs all three.
"""

BENCHMARKS = [
    "bench.nucleo_map",
    "bench.p2_http",
    "bench.p3_nearest",
    "bench.p5_lists",
    "bench.scoping",
]
DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
DEFAULT_REPORTS = 100_000
DEFAULT_RUNS = 7
DEFAULT_SEED = 42
