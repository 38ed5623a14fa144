"""The fiscalization demo's reports (demo/fiscalization.py): three dense spots that come out as
hotspots at the default DBSCAN settings (100 m, 3 reports) — a vacant lot that was cleaned and
is being reported again, a stream bank and a slope used as bota-fora — two duplicates merged
into their originals, and scattered reports at least 300 m apart (never a hotspot), in every
category and status, by citizens (with and without contact) and by the inspector `fiscal`."""

from __future__ import annotations

import datetime

from django.contrib.gis.geos import Point

from .fiscalization_loader import HOTSPOT_CENTRES, C, Loader, S, offset

ONE_DAY = datetime.timedelta(days=1)

# --- scattered reports ------------------------------------------------------------------------

# How far a scattered report got, in days after it was received.
CLEANED_PATH = ((1, S.CONFIRMED), (3, S.CLEANUP_SCHEDULED), (7.2, S.CLEANED))
PATHS = {
    "new": (),
    "confirmed": ((1.1, S.CONFIRMED),),
    "scheduled": ((1, S.CONFIRMED), (3.1, S.CLEANUP_SCHEDULED)),
    "cleaned": CLEANED_PATH,
    "cleaned_direct": ((1.9, S.CLEANED),),
    "unfounded": ((2.1, S.UNFOUNDED),),
    "reopened": ((2, S.UNFOUNDED), (6.1, S.CONFIRMED)),
}
# (path, how many, received between these many days ago)
SCATTERED_MIX = (
    ("new", 9, (1, 25)),
    ("confirmed", 9, (3, 70)),
    ("scheduled", 5, (6, 45)),
    ("cleaned", 9, (12, 160)),
    ("cleaned_direct", 2, (5, 90)),
    ("unfounded", 4, (4, 120)),
    ("reopened", 1, (10, 60)),
)
# The first UNLICENSED_AREA report lies inside PEV-07, whose license expired.
SCATTERED_CATEGORIES = (
    [C.UNLICENSED_AREA] * 3
    + [C.PUBLIC_AREA] * 11
    + [C.VACANT_LOT] * 9
    + [C.BOTA_FORA] * 4
    + [C.SLOPE] * 4
    + [C.WATER_BODY] * 4
    + [C.PROTECTED_AREA] * 4
)
assert len(SCATTERED_CATEGORIES) == sum(n for _path, n, _days in SCATTERED_MIX)
REPORTERS = ("fiscal", "contact", "anonymous")
REPORTER_WEIGHTS = (0.3, 0.35, 0.35)


# --- the plan: reports ------------------------------------------------------------------------


def _after(start: datetime.datetime, *moves: tuple) -> list[tuple]:
    """Moves at `days` (fractions allowed) after `start`: (days, status[, note])."""
    return [(start + datetime.timedelta(days=m[0]), *m[1:]) for m in moves]


def plan_hotspot_reports(ld: Loader, caught_at: datetime.datetime | None) -> None:
    def spot(name: str, east: float, north: float) -> Point:
        return offset(*HOTSPOT_CENTRES[name], east, north)

    def lot(east: float, north: float) -> Point:
        return spot("lot", east, north)

    def stream(east: float, north: float) -> Point:
        return spot("stream", east, north)

    def slope(east: float, north: float) -> Point:
        return spot("slope", east, north)

    # Reported twice, cleaned in one operation; then reported again and again.
    first, second = ld.day(118, 8, 40), ld.day(113, 19, 5)
    cleaned = first + datetime.timedelta(days=7.2)
    ld.report("lot-1", first, lot(0, 0), C.VACANT_LOT, "contact", _after(first, *CLEANED_PATH))
    ld.report(
        "lot-2",
        second,
        lot(28, 15),
        C.VACANT_LOT,
        "anonymous",
        [(second + ONE_DAY, S.CONFIRMED), (cleaned + datetime.timedelta(minutes=5), S.CLEANED)],
        confirm_new=True,
    )
    at = ld.day(71, 7, 55)
    moves = _after(at, (2, S.CONFIRMED), (9, S.CLEANUP_SCHEDULED))
    ld.report("lot-3", at, lot(-20, 25), C.VACANT_LOT, "contact", moves)
    # The inspector catches a carroceiro unloading there: the clandestine transporter's case.
    at = ld.day(24, 15, 0)
    ld.report(
        "lot-flagrant",
        at,
        lot(10, -22),
        C.VACANT_LOT,
        "fiscal",
        _after(at, (0.01, S.CONFIRMED, "Flagrante da fiscalização.")),
        description="Flagrante: carroça descarregando entulho de reforma no lote vago; "
        "condutor identificado, sem cadastro de transportador.",
        confirm_new=True,
    )
    ld.duplicate("lot-dup", "lot-flagrant", ld.day(23, 11, 20), ld.day(22, 9, 30))
    ld.report(
        "lot-5", ld.day(9, 18, 30), lot(-30, -10), C.VACANT_LOT, "anonymous", confirm_new=True
    )
    ld.report("lot-6", ld.day(2, 7, 10), lot(35, -5), C.VACANT_LOT, "contact", confirm_new=True)

    at = ld.day(61, 10, 15)
    moves = _after(
        at, (0.01, S.CONFIRMED, "Registrada e confirmada na ronda."), (6, S.CLEANUP_SCHEDULED)
    )
    ld.report("stream-1", at, stream(0, 0), C.WATER_BODY, "fiscal", moves)
    at = ld.day(50, 16, 45)
    ld.report(
        "stream-2",
        at,
        stream(40, 12),
        C.WATER_BODY,
        "contact",
        _after(at, (1, S.CONFIRMED)),
        confirm_new=True,
    )
    at = ld.day(41, 6, 50)
    ld.report(
        "stream-3",
        at,
        stream(-25, 30),
        C.WATER_BODY,
        "anonymous",
        _after(at, (2, S.CONFIRMED)),
        confirm_new=True,
    )
    ld.duplicate("stream-dup", "stream-3", ld.day(33, 12, 0), ld.day(32, 14, 10))
    ld.report(
        "stream-4", ld.day(18, 9, 5), stream(15, -35), C.WATER_BODY, "anonymous", confirm_new=True
    )
    ld.report(
        "stream-5", ld.day(5, 17, 40), stream(-40, -15), C.WATER_BODY, "contact", confirm_new=True
    )

    at = ld.day(45, 14, 20)
    ld.report("slope-1", at, slope(0, 0), C.SLOPE, "contact", _after(at, (1, S.CONFIRMED)))
    at = ld.day(30, 10, 0)
    ld.report(
        "slope-2",
        at,
        slope(30, 20),
        C.BOTA_FORA,
        "fiscal",
        _after(at, (0.01, S.CONFIRMED, "Vistoria de rotina.")),
        confirm_new=True,
    )
    # The dumping behind the third transporter's suspension.
    at = caught_at or ld.day(18, 8, 0)
    ld.report(
        "slope-caught",
        at,
        slope(-25, 15),
        C.SLOPE,
        "contact",
        _after(at, (1.05, S.CONFIRMED), (5, S.CLEANUP_SCHEDULED), (10, S.CLEANED)),
        description="Caminhão poliguindaste despejou uma caçamba de entulho encosta abaixo; "
        "anotei a placa.",
        confirm_new=True,
    )
    ld.report(
        "slope-4", ld.day(4, 13, 30), slope(10, -30), C.BOTA_FORA, "anonymous", confirm_new=True
    )


def plan_scattered_reports(ld: Loader) -> None:
    paths = [(name, days) for name, n, days in SCATTERED_MIX for _ in range(n)]
    ld.rng.shuffle(paths)
    for index, (category, (name, (low, high))) in enumerate(
        zip(SCATTERED_CATEGORIES, paths, strict=True)
    ):
        at = ld.day(ld.rng.randint(low, high), ld.rng.randint(6, 21), ld.rng.randrange(60))
        reporter = ld.rng.choices(REPORTERS, REPORTER_WEIGHTS)[0]
        location = ld.unlicensed_point() if index == 0 else ld.free_point()
        ld.report(
            f"scattered-{index + 1:02d}", at, location, category, reporter, _after(at, *PATHS[name])
        )
