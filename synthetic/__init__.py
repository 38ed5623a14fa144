"""Synthetic, plausible data at state scale for the benchmarks (bench/) and for trying the
platform at size: `manage.py generate_synthetic` (synthetic/generator.py).

Its own app, not part of `ctr`: it writes the tables of every app (the receiving network, the
CTRs, the dumping reports) in set-based SQL, and no app depends on it.
"""
