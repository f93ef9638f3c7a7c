"""Texts written on first read (ppdm.data.texts)."""

import json

import pytest

from ppdm.data.texts import LazyTexts


def test_texts_are_written_on_first_read_only():
    calls = []

    def make():
        calls.append(1)
        return ["a", "b", "c"]

    texts = LazyTexts(make, 3)
    assert len(texts) == 3 and not texts.written and not calls
    assert texts[1] == "b" and texts.written
    assert list(texts) == ["a", "b", "c"] and texts[0:2] == ["a", "b"] and texts == ["a", "b", "c"]
    texts[2] += "!"
    assert texts[2] == "c!" and len(calls) == 1
    assert json.dumps(list(texts)) == '["a", "b", "c!"]'


def test_a_wrong_number_of_texts_is_refused():
    with pytest.raises(ValueError, match="2 made for 3 groups"):
        LazyTexts(lambda: ["a", "b"], 3)[0]
