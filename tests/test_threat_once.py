"""An audit resolves its attacker once (issue 40): :func:`ppdm.audit` fills the threat's
defaults in against the training table and hands the resolved threat to every step (the
estimate, the exact proof, the baselines, the attackers with less knowledge), which check it
against their table and never resolve it again (:meth:`ThreatModel.is_resolved`)."""

from __future__ import annotations

import pytest

import ppdm
from ppdm.attacks.core.threat import ThreatModel
from ppdm.learn import ID3Classifier

from families import FAMILIES, tiny_table


def _resolutions(monkeypatch: pytest.MonkeyPatch) -> list[ThreatModel]:
    """The threats :meth:`ThreatModel.resolve` fills in from now on (not the resolved ones it only checks)."""
    filled: list[ThreatModel] = []
    original = ThreatModel.resolve

    def resolve(self: ThreatModel, data, class_attribute, *, splits=None):  # type: ignore[no-untyped-def]
        if not self.is_resolved(class_attribute):
            filled.append(self)
        return original(self, data, class_attribute, splits=splits)

    monkeypatch.setattr(ThreatModel, "resolve", resolve)
    return filled


def _model(family: str):  # type: ignore[no-untyped-def]
    frame, X, D, y = tiny_table(3)
    model = ID3Classifier().fit(X, y).tree_ if family == "tree" else FAMILIES[family](X, D, y)
    return model, frame


@pytest.mark.parametrize("family", ["tree", "random-forest", "gradient-boosting"])
def test_an_audit_resolves_its_threat_once(monkeypatch: pytest.MonkeyPatch, family: str) -> None:
    model, frame = _model(family)
    threat = ThreatModel(sensitive="a", known=("b",))
    filled = _resolutions(monkeypatch)
    audit = ppdm.audit(model, frame, threat, exact=True, progress=False)
    assert filled == [threat]
    assert audit.threat.is_resolved(model.class_attribute)
    assert audit.estimate is not None and audit.proved is not None


def test_a_resolved_threat_resolves_to_itself_and_is_still_checked() -> None:
    frame, *_ = tiny_table(3)
    resolved = ThreatModel(sensitive="a", known=("b",), class_known=True).resolve(frame, "y")
    assert resolved.is_resolved("y") and not resolved.is_resolved("other")
    assert resolved.resolve(frame, "y") is resolved
    with pytest.raises(ppdm.errors.DataError, match="'b'"):
        resolved.resolve(frame.drop(columns="b"), "y")
    with pytest.raises(ppdm.errors.DataError, match="row 33"):
        ThreatModel(sensitive="a", known=("b",), known_individuals=(33,)).resolve(frame, "y").resolve(frame.iloc[:30], "y")


@pytest.fixture
def tree_files(tmp_path):  # type: ignore[no-untyped-def]
    """A tree and its training table as the files the CLI reads."""
    from ppdm.tree.model_files import save_model

    model, frame = _model("tree")
    save_model(model, tmp_path / "tree.json")
    frame.to_csv(tmp_path / "train.csv", index=False)
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        ["audit", "--tree", "{d}/tree.json", "--data", "{d}/train.csv", "--sensitive", "a", "--known", "b", "--class-known", "--exact"],
        ["attack", "--tree", "{d}/tree.json", "--data", "{d}/train.csv", "--quasi-identifiers", "a,b"],
        ["attack", "--tree", "{d}/tree.json", "--data", "{d}/train.csv", "--attack", "background", "--known", "{d}/known.csv"],
        ["audit-rules", "--data", "{d}/train.csv", "--sensitive", "y", "--support", "0.1", "--confidence", "0.5"],
    ],
    ids=["audit", "attack", "attack-background", "audit-rules"],
)
def test_each_command_resolves_its_threat_once(monkeypatch: pytest.MonkeyPatch, tree_files, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from ppdm.cli import main

    frame, *_ = tiny_table(3)
    frame.iloc[[0, 5]].to_csv(tree_files / "known.csv", index=False)
    filled = _resolutions(monkeypatch)
    result = CliRunner().invoke(main, [a.format(d=tree_files) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert len(filled) == 1
