"""The illustrated tour's journeys (docs/tour.md, `make tour`) through the demo in Chromium:
every page answers as expected, runs without JavaScript errors and fits a phone."""

import pytest
from django.core.management import call_command

from tests.enforcement_world import ensure_frameworks
from tour import walk as tour

pytestmark = pytest.mark.e2e


@pytest.fixture
def demo():
    # The demo needs the penalty frameworks migrations load, which the live-server tests before
    # this one flushed (idempotent; the demo confirms its own art. 23 table and carries the
    # UFESP of every year it uses).
    ensure_frameworks()
    for command in ("load_demo", "load_ctr_demo", "load_fiscalization_demo"):
        call_command(command, verbosity=0)
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


def test_the_tour_page_shows_each_step_at_both_widths(tmp_path):
    refs = tour.DemoReferences("CTR-3518404-2026-000001", 1, "ABCD-EFGH", 1)
    journeys = tour.journeys(refs)
    shots = [
        tour.Shot(journey, step, width, tmp_path / f"{journey.slug}-{step.slug}-{width.slug}.jpg")
        for width in tour.WIDTHS
        for journey in journeys
        for step in journey.steps
    ]

    text = tour.markdown(shots, "tour")

    for journey in journeys:
        assert text.count(f"## {journey.title}") == 1
        for step in journey.steps:
            assert text.count(f"### {step.caption}\n") == 1
            for width in tour.WIDTHS:
                assert f'src="tour/{journey.slug}-{step.slug}-{width.slug}.jpg"' in text
