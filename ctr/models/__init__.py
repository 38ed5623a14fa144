"""The ctr app's models: the actors and the CTR document (Lei 3.978/2007 art. 3 VI, art. 9,
art. 12-13), one module per part, each importing only the parts below it:

- `parties`: transporters and their licences, generators, the facilities' operators, whom a
  user acts for (Membership);
- `fleet`: a transporter's vehicles and equipment;
- `worksites`: where waste is generated, one per generator and address;
- `document`: the CTR, its waste lines, its number's sequence and its history;
- `custody`: a facility's on-site processing and the FIFO allocation of its stock;
- `certificates`: the Certificado de Destinação Final and the verification codes;
- `idempotency`: the API's idempotency keys;
- `ctr_templates`: the CTR templates a transporter issues from;
- `corrections`: the corrections of a received CTR.

Import them from here (`from ctr.models import CTR`): the names are the package's, whichever
module holds them.
"""

from .certificates import (
    CERTIFICATE_ALPHABET,
    DECLARATION_CODE_PREFIX,
    DestinationCertificate,
    new_certificate_code,
    new_verification_code,
)
from .corrections import (
    OPEN_CORRECTION_STATUSES,
    CorrectionSide,
    CorrectionStatus,
    CTRCorrection,
)
from .ctr_templates import CTRTemplate
from .custody import CustodyAllocation, CustodyStale, OnSiteProcessing, ProcessingKind
from .document import (
    CROSSING_INTO_SQL,
    CTR,
    PROHIBITED_CLASSES,
    CTRAction,
    CTREvent,
    CTRQuerySet,
    CTRStatus,
    CTRWaste,
    CTRWasteClass,
    NumberSequence,
    crossed_into,
    generator_ctrs_q,
)
from .fleet import Equipment, EquipmentKind, FleetQuerySet, Vehicle
from .idempotency import IdempotencyKey
from .parties import (
    FacilityOperator,
    Generator,
    GeneratorQuerySet,
    LicenceStatus,
    Membership,
    MembershipQuerySet,
    Transporter,
    TransporterLicence,
    TransporterLicenceQuerySet,
    TransporterQuerySet,
    licence_restriction_sql,
    licence_valid_sql,
    membership_of,
    restricted_q,
)
from .worksites import (
    ADDRESS_KEY_SQL,
    WORKSITE_CONFLICT_SQL,
    WorkKind,
    Worksite,
    WorksiteQuerySet,
    address_key,
)

__all__ = [
    # parties
    "FacilityOperator",
    "Generator",
    "GeneratorQuerySet",
    "LicenceStatus",
    "Membership",
    "MembershipQuerySet",
    "Transporter",
    "TransporterLicence",
    "TransporterLicenceQuerySet",
    "TransporterQuerySet",
    "licence_restriction_sql",
    "licence_valid_sql",
    "membership_of",
    "restricted_q",
    # fleet
    "Equipment",
    "EquipmentKind",
    "FleetQuerySet",
    "Vehicle",
    # worksites
    "ADDRESS_KEY_SQL",
    "WORKSITE_CONFLICT_SQL",
    "WorkKind",
    "Worksite",
    "WorksiteQuerySet",
    "address_key",
    # document
    "CROSSING_INTO_SQL",
    "CTR",
    "CTRAction",
    "CTREvent",
    "CTRQuerySet",
    "CTRStatus",
    "CTRWaste",
    "CTRWasteClass",
    "NumberSequence",
    "PROHIBITED_CLASSES",
    "crossed_into",
    "generator_ctrs_q",
    # custody
    "CustodyAllocation",
    "CustodyStale",
    "OnSiteProcessing",
    "ProcessingKind",
    # certificates
    "CERTIFICATE_ALPHABET",
    "DECLARATION_CODE_PREFIX",
    "DestinationCertificate",
    "new_certificate_code",
    "new_verification_code",
    # idempotency
    "IdempotencyKey",
    # ctr_templates
    "CTRTemplate",
    # corrections
    "CTRCorrection",
    "CorrectionSide",
    "CorrectionStatus",
    "OPEN_CORRECTION_STATUSES",
]
