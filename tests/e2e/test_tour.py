"""The illustrated tour's journeys (docs/tour.md, `make tour`) through the demo in Chromium:
every page answers as expected, runs without JavaScript errors and fits a phone."""

import datetime
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.clock import FROZEN_NOW, frozen_clock
from tests.enforcement_world import ensure_frameworks
from tour import walk as tour

pytestmark = pytest.mark.e2e


@pytest.fixture
def demo():
    # The demo needs the penalty frameworks migrations load, which the live-server tests before
    # this one flushed (idempotent; the demo confirms its own art. 23 table and carries the
    # UFESP of every year it uses).
    ensure_frameworks()
    call_command("load_demo", verbosity=0)
    return tour.demo_references()


@pytest.mark.django_db(transaction=True)
def test_every_journey_of_the_tour_passes_at_both_widths(chromium, live_server, demo, tmp_path):
    journeys = tour.journeys(demo)

    shots = tour.run(live_server.url, tmp_path, chromium, journeys)

    steps = sum(len(journey.steps) for journey in journeys)
    assert len(shots) == steps * len(tour.WIDTHS)
    assert {shot.file.name for shot in shots} == {path.name for path in tmp_path.glob("*.jpg")}
    problems = [
        f"{shot.step.path} @ {shot.width.slug}: {problem}"
        for shot in shots
        for problem in shot.problems
    ]
    assert problems == []


def _page_text(refs: tour.DemoReferences, tmp_path) -> str:
    journeys = tour.journeys(refs)
    shots = [
        tour.Shot(journey, step, width, tmp_path / f"{journey.slug}-{step.slug}-{width.slug}.jpg")
        for width in tour.WIDTHS
        for journey in journeys
        for step in journey.steps
    ]
    return tour.markdown(shots, "tour")


def test_the_tour_page_shows_each_step_at_both_widths(tmp_path):
    refs = tour.DemoReferences("CTR-3518404-2026-000001", 1, "ABCD-EFGH", 1)
    journeys = tour.journeys(refs)

    text = _page_text(refs, tmp_path)

    for journey in journeys:
        assert text.count(f"## {journey.title}") == 1
        for step in journey.steps:
            assert text.count(f"### {step.caption}\n") == 1
            for width in tour.WIDTHS:
                assert f'src="tour/{journey.slug}-{step.slug}-{width.slug}.jpg"' in text


def test_the_tour_page_is_the_same_whatever_the_day_and_the_demo_load(tmp_path):
    # docs/tour.md is tracked: a run on another day, or on a demo loaded another day (other
    # CTR numbers, other protocols), must not change its text.
    today = _page_text(
        tour.DemoReferences("CTR-3518404-2026-000322", 7, "2026-SBRT-A343", 3), tmp_path
    )
    with frozen_clock(FROZEN_NOW + datetime.timedelta(days=400)):
        later = _page_text(
            tour.DemoReferences("CTR-3518404-2028-000017", 7, "2028-QXZW-B001", 3), tmp_path
        )
    assert today == later
    assert "/nucleo/?date_from=" in today and "2026" not in today and "2028" not in today


def test_the_tour_command_leaves_the_tracked_docs_alone_unless_told(settings, tmp_path):
    # manage.py tour writes where git does not track (.local/tour/); --docs DIR to refresh them.
    from tour.management.commands.tour import Command

    parser = Command().create_parser("manage.py", "tour")
    default = Path(parser.parse_args([]).docs).resolve()
    root = Path(settings.BASE_DIR).resolve()
    assert default == root / ".local" / "tour"
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", str(default / "tour.md")], cwd=root, check=False
    )
    assert ignored.returncode == 0
