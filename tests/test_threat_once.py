"""An audit resolves its attacker once (issue 40): :func:`ppdm.audit` fills the threat's
defaults in against the training table and hands the resolved threat to every step (the
estimate, the exact proof, the baselines, the attackers with less knowledge), which check it
against their table and never resolve it again (:meth:`ThreatModel.is_resolved`)."""

from __future__ import annotations

import numpy as np
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


def test_known_individuals_are_the_tables_row_ids() -> None:
    """``known_individuals`` name rows as ``people()`` does, by the table's index, and keep naming
    the same people when ``missing="drop"`` leaves rows out before them."""
    from ppdm.data.datasets import load_dataset
    from ppdm.errors import DataError
    from ppdm.learn.estimators import ID3Classifier

    frame, _ = load_dataset("nursery")
    table = frame.sample(600, random_state=4).reset_index(drop=True)[["parents", "has_nurs", "form", "health", "class"]]
    tree = ID3Classifier(max_depth=3).fit(table[["parents", "has_nurs", "form"]], table["class"]).tree_
    threat = lambda rows: ppdm.ThreatModel(sensitive="health", known=("parents", "class"), known_individuals=rows)  # noqa: E731
    by_position = ppdm.audit(tree, table, threat((3, 7)), progress=False).people()
    moved = table.set_axis(table.index + 1000)
    by_id = ppdm.audit(tree, moved, threat((1003, 1007)), progress=False).people()
    assert by_id["row"].tolist() == (by_position["row"] + 1000).tolist()
    assert by_id.set_index("row").loc[[1003, 1007], "target"].tolist() == [False, False]
    np.testing.assert_array_equal(by_id.filter(like="P(").to_numpy(), by_position.filter(like="P(").to_numpy())
    with pytest.raises(DataError, match=r"known individual row 3 is not a row of the table \(its index runs over ids 1000 to 1599"):
        ppdm.audit(tree, moved, threat((3,)), progress=False)
    holed = moved.copy()
    holed.loc[1005, "parents"] = None
    kept = ppdm.audit(tree, holed, threat((1003, 1007)), missing="drop", progress=False).people().set_index("row")
    assert 1005 not in kept.index and kept.loc[[1003, 1007], "target"].tolist() == [False, False] and kept["target"].sum() == 597
    with pytest.raises(DataError, match="known individual row 1005 has a missing value"):
        ppdm.audit(tree, holed, threat((1005,)), missing="drop", progress=False)
