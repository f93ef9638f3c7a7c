"""An audit's outputs keep their kinds apart: the report is a page named ``.html`` (its PDF
``.pdf``) and the saved audit is JSON, so ``audit.report("audit.json")`` cannot replace the saved
audit with a page, nor ``audit.save("audit.html")`` the page with JSON; nothing is written."""

from __future__ import annotations

import pytest
from small_nursery import FEATURES, small_nursery, small_tree

import ppdm
from ppdm.errors import ReportError


@pytest.fixture(scope="module")
def audited():  # type: ignore[no-untyped-def]
    frame = small_nursery(3)
    return ppdm.audit(small_tree(frame), frame, ppdm.ThreatModel(known=tuple(FEATURES[:2])), progress=False)


def test_a_report_over_the_saved_audit_is_refused(audited, tmp_path) -> None:
    saved = tmp_path / "audit.json"
    audited.save(saved)
    before = saved.read_bytes()
    with pytest.raises(ReportError, match=r"audit\.json: the report is an HTML page; name it \.html"):
        audited.report(saved)
    with pytest.raises(ReportError, match=r"name the PDF \.pdf"):
        audited.report(tmp_path / "audit.html", pdf=tmp_path / "audit.png")
    assert saved.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["audit.json"]


def test_the_audit_is_not_saved_under_a_pages_name(audited, tmp_path) -> None:
    with pytest.raises(ReportError, match=r"audit\.html: the audit is saved as JSON"):
        audited.save(tmp_path / "audit.html")
    assert not list(tmp_path.iterdir())
    audited.report(tmp_path / "audit.html")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["audit.html", "audit.report.json"]
