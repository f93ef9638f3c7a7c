"""The advice reads an attacker's accuracy lift, never the exact audit's: the proof's accuracy is
read from the middle of each proved interval (its card says to read the estimate's), so a proof
of nobody advised "the model tells the attacker almost nothing beyond the prior (+0.000)" under an
estimate with a lift of 5 points."""

from ppdm.report.advice import _little_beyond_prior


def _attack(name: str, kind: str, lift: float) -> dict:
    return {"name": name, "attack": kind, "summary": {"lift": {"difference": lift}}, "verdict": {"level": "meets"}}


def test_the_exact_audit_s_accuracy_is_not_advised_on():
    attacks = [_attack("maxent attack on 'disease'", "maxent", 0.0475), _attack("exact attack on 'disease'", "exact", 0.0)]
    assert _little_beyond_prior(attacks) == []


def test_an_attacker_with_no_lift_is_still_advised_on():
    (line,) = _little_beyond_prior([_attack("maxent attack on 's'", "maxent", 0.002)])
    assert line.startswith("maxent attack on 's': the model tells the attacker almost nothing")
