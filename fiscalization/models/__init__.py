"""Fiscalization: dumping reports (reports.py) and the enforcement procedure (enforcement.py)."""

from .enforcement import (  # noqa: F401
    Appeal,
    DeliveryAttempt,
    DeliveryMethod,
    DeliveryOutcome,
    EmbargoBreach,
    EnforcementCase,
    InfractionItem,
    InfractionRecord,
    Notice,
    Offender,
    OffenderRole,
    Penalty,
    PenaltyKind,
    PenaltyTableEntry,
    RecordStatus,
    UfespRate,
)
from .frameworks import (  # noqa: F401
    DayCount,
    EditalReceipt,
    Escalation,
    IndexVariation,
    MoneyUnit,
    NoticeFirst,
    PaymentFrom,
    PenaltyFramework,
)
from .reports import (  # noqa: F401
    DumpingCategory,
    DumpingPhoto,
    DumpingReport,
    DumpingReportEvent,
    ReporterKind,
    ReportStatus,
    new_protocol,
    photo_path,
)
