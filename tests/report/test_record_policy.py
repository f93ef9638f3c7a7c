"""The release record under the checker's policy (issue 46): it cites the policy and its SHA-256
and stays valid against its schema; a defended model no better than the majority class on
held-out rows is not "release the defended model"; an approximate estimate with no proof is not
"met" (neither a green verdict nor "release") unless the policy counts approximate evidence."""

from __future__ import annotations

import hashlib

from schema_check import validate

import ppdm
from ppdm.attacks.core.target import default_target
from ppdm.check.gap import no_better_than_majority
from ppdm.check.policy import PRESETS, load_policy
from ppdm.report.record import DO_NOT_RELEASE, RELEASE, RELEASE_DEFENDED, decide, schema
from ppdm.report.verdict import target_line

NAMES = [m.name for m in default_target().measures]
MET = {"role": "estimate", "result": {}, "measures": dict.fromkeys(NAMES, 0.0), "target": dict.fromkeys(NAMES, "met")}


def test_the_record_cites_the_policy_and_its_sha256_and_audits_against_its_target(audit, tmp_path):
    tree, frame, threat, _ = audit
    path = tmp_path / "tre.yaml"
    path.write_text("name: our TRE\nattribute:\n  certain: 5\n  confident: {share: 0.5, at: 0.95}\n", encoding="utf-8")
    done = ppdm.audit(tree, frame, threat, policy=path, progress=False)
    assert done.target.to_text() == "certain=5,confident=0.5@0.95"
    record = done.release_record()
    validate(record, schema())
    assert record["policy"]["name"] == "our TRE" and record["policy"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert record["target"]["text"] == "certain=5,confident=0.5@0.95"
    checks = record["checks"]  # the checker's findings on the audited model, and its one recommendation
    rules = {f["rule"] for f in checks["findings"]}
    assert {"min_group_size", "class_disclosure", "small_groups", "residual_dof", "attribute"} <= rules
    assert checks["recommendation"]["decision"] in ("reject", "release", "release with conditions")
    assert checks["recommendation"]["decision"] != "release" or all(f["state"] == "passed" for f in checks["findings"])
    plain = ppdm.audit(tree, frame, threat, progress=False).release_record()
    validate(plain, schema())
    assert "policy" not in plain


def test_a_defended_model_at_the_majority_share_is_not_released_as_the_defenses_success():
    target = default_target()
    chosen = {"label": "Method 1, s=50", "family": "pruning-1", "accuracy": 0.7008, "accuracy_on": "held-out"}
    flat = {"chosen": "Method 1, s=50", "chosen_family": "pruning-1", "chosen_candidate": chosen, "majority_share": 0.7, "majority_rows": 250,
            "no_better_than_majority": no_better_than_majority(0.7008, 250, 0.7)}  # fmt: skip
    decision, reasons = decide([MET], target, flat)
    assert decision == DO_NOT_RELEASE and "no better than the majority class" in reasons[0] and "0.7008" in reasons[0]
    useful = {**flat, "chosen_candidate": {**chosen, "accuracy": 0.8}, "no_better_than_majority": no_better_than_majority(0.8, 250, 0.7)}
    assert decide([MET], target, useful)[0] == RELEASE_DEFENDED


def test_the_majority_test_reads_the_held_out_rows():
    assert no_better_than_majority(0.7, 300, 0.7) and no_better_than_majority(0.7008, 250, 0.7)
    assert not no_better_than_majority(0.8, 300, 0.7)
    assert no_better_than_majority(0.75, 20, 0.7)  # a few rows: not significant


def test_an_approximate_estimate_without_a_proof_is_not_met_unless_the_policy_counts_it():
    target = default_target()
    pooled = {**MET, "result": {"status": "approximate", "method": "pooled"}}
    decision, reasons = decide([pooled], target, None)
    assert decision == DO_NOT_RELEASE and "approximate estimate" in reasons[0]
    level, line = target_line({"status": "approximate", "targets": 10, "confidence_in_true_value": {">=0.9": 0}, "exposed_records": 0, "baseline": {}}, target)
    assert level == "unknown" and "approximate" in line  # no green "meets" in the report
    assert decide([pooled], target, None, policy=load_policy({"evidence": {"approximate_counts": True}}))[0] == RELEASE
    proved = {**MET, "role": "exact", "result": {}}
    assert decide([pooled, proved], target, None, policy=PRESETS["default"])[0] == RELEASE  # a proof beside it
