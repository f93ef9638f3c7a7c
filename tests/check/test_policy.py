"""The checker's policy (issue 46, deliverable 1): the schema ships as package data and accepts
every preset; a file is read strictly (unknown keys, wrong types and keys written twice refused
in one line naming them); the policy's targets; the release record cites it with its SHA-256."""

from __future__ import annotations

import hashlib

import pytest
from schema_check import errors, validate

from ppdm.check.policy import FAMILIES, PRESETS, RULES, Policy, PolicyError, load_policy, policy_schema, read_policy, with_policy
from ppdm.errors import PpdmError


def test_the_schema_is_package_data_and_lists_the_rules_and_families_the_code_knows():
    s = policy_schema()
    assert s["$schema"].endswith("2020-12/schema")
    assert tuple(s["properties"]["reject"]["items"]["enum"]) == RULES
    assert tuple(s["properties"]["reject_families"]["items"]["enum"]) == FAMILIES
    assert set(s["properties"]["extends"]["enum"]) == set(PRESETS)
    from ppdm.check.findings import STATES, STRENGTHS
    from ppdm.check.recommend import DECISIONS
    from ppdm.report.record import schema

    record = schema()  # the release record files the checker's findings under the same names
    finding = record["$defs"]["finding"]["properties"]
    assert tuple(finding["rule"]["enum"]) == RULES and tuple(finding["state"]["enum"]) == STATES
    assert tuple(finding["strength"]["enum"]) == STRENGTHS
    assert set(record["properties"]["checks"]["properties"]["recommendation"]["properties"]["decision"]["enum"]) == set(DECISIONS)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_is_valid_and_reads_back_as_itself(name):
    preset = PRESETS[name]
    validate(preset.to_dict(), policy_schema())
    again = load_policy(preset.to_dict())
    assert again == preset
    assert len(preset.sha256) == 64 and preset.source == f"preset {name}"


def test_the_acro_preset_holds_acros_defaults():
    acro = PRESETS["acro"]
    assert (acro.min_group_size, acro.min_residual_dof, acro.zeros_disclosive) == (10, 10, True)
    strict = PRESETS["strict"]
    assert strict.min_group_size > acro.min_group_size and set(strict.reject) == set(RULES)


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"structurl": {}}, "'structurl'"),
        ({"structural": {"safe_threshold": 10}}, "'safe_threshold'"),
        ({"attribute": {"confident": {"share": 0.01, "at": 0.9, "level": 1}}}, "'level'"),
        ({"membership": {"tpr": 0.1}}, "'tpr'"),
        ({"evidence": {"approximate": True}}, "'approximate'"),
        ({"reject": ["dof"]}, "'dof'"),
        ({"reject_families": ["svm", "transformer"]}, "'transformer'"),
    ],
)
def test_an_unknown_key_is_refused_in_one_line_naming_it_and_the_schema_refuses_it_too(data, named):
    with pytest.raises(PolicyError) as caught:
        load_policy(data, where="p.yaml")
    message = str(caught.value)
    assert "\n" not in message and named in message and message.startswith("p.yaml")
    assert errors(data, policy_schema())


@pytest.mark.parametrize(
    "data",
    [
        {"structural": {"min_group_size": 0}},
        {"structural": {"min_group_size": True}},
        {"structural": {"min_group_size": 2.5}},
        {"structural": {"zeros_disclosive": "yes"}},
        {"structural": {"max_generalisation_gap": 1.5}},
        {"attribute": {"confident": {"share": 0.01}}},
        {"attribute": {"confident": {"share": 2, "at": 0.9}}},
        {"membership": {"tpr_at_fpr": {"fpr": 1, "tpr": 0.02}}},
        {"extends": "lenient"},
        {"name": ""},
    ],
)
def test_a_wrong_value_is_refused_by_the_reader_and_by_the_schema(data):
    with pytest.raises(PolicyError):
        load_policy(data)
    assert errors(data, policy_schema())


def test_a_file_extends_a_preset_and_is_cited_by_the_sha256_of_its_text(tmp_path):
    path = tmp_path / "tre.yaml"
    path.write_text("name: our TRE\nextends: acro\nstructural:\n  min_group_size: 25\nevidence:\n  approximate_counts: true\n", encoding="utf-8")
    policy = read_policy(path)
    assert isinstance(policy, Policy)
    assert (policy.name, policy.min_group_size, policy.min_residual_dof, policy.approximate_counts) == ("our TRE", 25, 10, True)
    assert policy.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert policy.cite()["sha256"] == policy.sha256 and policy.cite()["source"] == str(path)
    validate(policy.to_dict(), policy_schema())


def test_a_key_written_twice_and_a_file_too_large_are_refused(tmp_path):
    twice = tmp_path / "twice.yaml"
    twice.write_text("structural:\n  min_group_size: 5\n  min_group_size: 50\n", encoding="utf-8")
    with pytest.raises(PpdmError, match="written twice"):
        read_policy(twice)
    large = tmp_path / "large.yaml"
    large.write_text("description: " + "x" * 70_000 + "\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="bytes"):
        read_policy(large)
    with pytest.raises(PolicyError, match="neither a preset"):
        read_policy("lenient")


def test_the_policy_is_the_audits_target_and_a_target_beside_it_is_refused():
    target, policy = with_policy("strict", None, membership=False)
    assert policy is PRESETS["strict"] and target.to_text() == "certain=0,confident=0.005@0.8"
    target, _ = with_policy("strict", None, membership=True)
    assert target.to_text() == "members_proved<=0,mia_tpr@1%<=0.02"
    assert with_policy("acro", None, membership=False)[0] is None  # no attribute target: the audit's default
    assert with_policy(None, "certain=0", membership=False) == ("certain=0", None)
    with pytest.raises(PolicyError, match="not both"):
        with_policy("acro", "certain=0", membership=False)
