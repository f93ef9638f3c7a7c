"""Every options dataclass refuses a flag that is not True/False and a number that is text,
NaN, (for a count) fractional or (for a time) negative, naming the class and the field (issue 41: flags
read by truthiness; options objects were not checked)."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import pytest

import ppdm
from ppdm.errors import ArgumentTypeError, PpdmError, check_options


def _options_classes() -> list[type]:
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(ppdm.__path__, "ppdm."):
        if ".cli" in info.name or info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if name.endswith("Options") and dataclasses.is_dataclass(value) and isinstance(value, type) and value.__module__ == info.name:
                found[f"{value.__module__}.{name}"] = value
    return [found[k] for k in sorted(found)]


OPTIONS = _options_classes()


def _fields(kind: str) -> list[tuple[type, str]]:
    return [(c, f.name) for c in OPTIONS for f in dataclasses.fields(c) if str(f.type) == kind and f.init]


def test_every_options_class_is_found_and_checks_itself():
    assert len(OPTIONS) >= 10
    for cls in OPTIONS:
        check_options(cls())  # the defaults pass


@pytest.mark.parametrize(("cls", "name"), _fields("bool"), ids=lambda v: v if isinstance(v, str) else v.__name__)
@pytest.mark.parametrize("bad", ["no", 1, None])
def test_a_flag_that_is_not_true_or_false_is_refused_naming_the_field(cls, name, bad):
    with pytest.raises(ArgumentTypeError, match=rf"^{cls.__name__}\.{name} must be True or False"):
        cls(**{name: bad})


# AuditOptions' budgets speak as ppdm.audit's keywords of the same names (test_python_api.py)
NUMBERS = [(c, n) for c, n in _fields("int") + _fields("float") + _fields("float | None") + _fields("int | None") if c.__name__ != "AuditOptions"]


def test_the_audits_budgets_are_named_as_its_keywords():
    from ppdm.pipeline.options import AuditOptions

    for name in ("time_limit", "exact_time_limit"):
        for bad in ("5", -1, float("nan")):
            with pytest.raises(PpdmError, match=rf"^{name} must be a finite number of seconds >= 0, got"):
                AuditOptions(**{name: bad})


@pytest.mark.parametrize(("cls", "name"), NUMBERS, ids=lambda v: v if isinstance(v, str) else v.__name__)
def test_a_number_given_as_text_negative_or_nan_is_refused_naming_the_field(cls, name):
    with pytest.raises(ArgumentTypeError, match=rf"^{cls.__name__}\.{name} must be a number, got '5'"):
        cls(**{name: "5"})
    with pytest.raises(PpdmError, match=rf"^{cls.__name__}\.{name} must be a number, got nan$"):
        cls(**{name: float("nan")})
    if name.endswith(("time_limit", "seconds")):
        with pytest.raises(PpdmError, match=rf"^{cls.__name__}\.{name} must be non-negative seconds, got -1$"):
            cls(**{name: -1})


def test_a_count_must_be_whole_and_an_unlimited_time_is_allowed():
    from ppdm.maxent.solvers.forest_solve import ForestSolveOptions

    with pytest.raises(PpdmError, match=r"^ForestSolveOptions\.max_newton must be a whole number, got 2\.5$"):
        ForestSolveOptions(max_newton=2.5)
    assert ForestSolveOptions(max_newton=3.0, time_limit=float("inf"), threads=None).time_limit == float("inf")
