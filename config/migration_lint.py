"""Migrations a rolling deploy survives (docs/operations.md): django-migration-linter reads
every migration's SQL and fails on a backward-incompatible one (a column dropped or renamed, a
NOT NULL added without a default, a table dropped or renamed…), which the version still running
beside the new one would trip over.

    python -m config.migration_lint              `make lint` runs it (.ci/run)
    python -m config.migration_lint --with-app DIR:LABEL [--only-with-apps]
                                                 also (or only) an app outside the project, at
                                                 DIR (tests/config/test_migration_lint.py)

EXCEPTIONS lists the migrations the linter is not asked about, each with its reason. Add one
only with a reason a reviewer can check; a migration shipped after this rule needs the
expand/contract steps of docs/operations.md instead."""

from __future__ import annotations

import argparse
import os
import sys

# The reasons, grouped. "Shipped before the rule" covers migrations released before CI linted
# migrations: they ran long ago on every database, and a rolling deploy only ever runs
# the newest ones. Each entry says which kind of change the linter flags in it.
BEFORE_THE_RULE = "shipped before the rule (issue 26)"

NOT_NULL = f"{BEFORE_THE_RULE}: NOT NULL column added with a Python-side default"
DROPPED = f"{BEFORE_THE_RULE}: column dropped once the code stopped reading it"
UNIQUE = f"{BEFORE_THE_RULE}: unique constraint added (old rows checked by the migration)"
ALTERED = f"{BEFORE_THE_RULE}: column altered (NOT NULL) after a backfill in the same release"

EXCEPTIONS: dict[tuple[str, str], str] = {
    ("ctr", "0006_declared_generator_name_unique_worksite"): f"{UNIQUE}; {NOT_NULL}",
    ("ctr", "0012_worksite_registration_generator_member"): UNIQUE,
    ("ctr", "0017_provisional_ctrs"): UNIQUE,
    ("ctr", "0020_transporter_licences"): DROPPED,
    ("fiscalization", "0009_penalty_table_per_municipality"): f"{UNIQUE}; {NOT_NULL}",
    ("fiscalization", "0010_penalty_frameworks"): f"{UNIQUE}; {ALTERED}",
    ("fiscalization", "0012_case_framework_required"): NOT_NULL,
    ("fiscalization", "0013_authorship"): NOT_NULL,
    ("fiscalization", "0014_frameworks_own_municipality_appeal_source"): f"{DROPPED}; {NOT_NULL}",
    ("fiscalization", "0014_who_applies_each_penalty"): NOT_NULL,
    ("fiscalization", "0015_embargo_cancellation_requirements"): NOT_NULL,
    ("fiscalization", "0015_framework_fine_table_law"): NOT_NULL,
    ("fiscalization", "0015_payment_amount_and_guide"): NOT_NULL,
    ("fiscalization", "0016_frameworks_embargo_and_notice_extension"): NOT_NULL,
    ("pev_network", "0003_received_volume_tolerance"): NOT_NULL,
    ("pev_network", "0004_sorting_tolerance_stock_alert"): NOT_NULL,
    ("pev_network", "0005_generator_confirmation"): NOT_NULL,
    ("pev_network", "0006_waste_generation_rates"): NOT_NULL,
    ("pev_network", "0007_large_generator_threshold"): NOT_NULL,
    ("pev_network", "0008_suspect_worksite_thresholds"): NOT_NULL,
    ("pev_network", "0010_travel_time"): NOT_NULL,
    ("pev_network", "0011_municipality_waste_law"): NOT_NULL,
    ("pev_network", "0014_municipality_fee_collector"): NOT_NULL,
    ("pev_network", "0015_ufesp_one_home"): DROPPED,
}


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m config.migration_lint")
    parser.add_argument("--with-app", action="append", default=[], metavar="DIR:LABEL")
    parser.add_argument("--only-with-apps", action="store_true", help="not the project's apps")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.conf import settings

    extra = []
    for spec in args.with_app:
        directory, _, label = spec.rpartition(":")
        sys.path.insert(0, directory)
        extra.append(label)
    if extra:
        settings.INSTALLED_APPS = [*settings.INSTALLED_APPS, *extra]

    import django

    django.setup()
    from django_migration_linter import MigrationLinter

    class ProjectLinter(MigrationLinter):
        # The linter's own ignore list matches names only ("0002_…" is in several apps).
        def should_ignore_migration(self, app_label, migration_name, *rest, **kwargs):
            return (app_label, migration_name) in EXCEPTIONS or super().should_ignore_migration(
                app_label, migration_name, *rest, **kwargs
            )

    linter = ProjectLinter(
        str(settings.BASE_DIR),
        no_cache=True,
        quiet=["ok", "ignore"],  # what is wrong, and the warnings, are printed
        analyser_string="postgresql",  # PostGIS is PostgreSQL
        # The project's apps (and --with-app's); Django's own and the libraries' are theirs.
        include_apps=extra if args.only_with_apps else [*project_apps(settings.BASE_DIR), *extra],
    )
    linter.lint_all_migrations()
    linter.print_summary()
    return 1 if linter.has_errors else 0


def project_apps(base_dir) -> list[str]:
    from django.apps import apps

    base = os.path.realpath(base_dir)
    return [
        config.label
        for config in apps.get_app_configs()
        if os.path.realpath(config.path).startswith(base + os.sep)
        and f"{os.sep}site-packages{os.sep}" not in config.path
    ]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
