"""The privacy target moved to :mod:`ppdm.attacks.core.target` (one target for the defense, the audit,
the report and the release record); this module keeps the old import path working."""

from ppdm.attacks.core.target import (
    CERTAINTY_TOL,
    Certain,
    Confident,
    Evidence,
    LDiverse,
    LiftOverReference,
    MembershipEvidence,
    MembersProved,
    MiaTpr,
    MinSpan,
    RiskMeasure,
    Target,
    parse_target,
)

__all__ = [
    "CERTAINTY_TOL", "Certain", "Confident", "Evidence", "LDiverse", "LiftOverReference", "MembersProved", "MembershipEvidence", "MiaTpr", "MinSpan",
    "RiskMeasure", "Target", "parse_target",
]
