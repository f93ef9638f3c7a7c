"""Every error class and warning ppdm defines lives in ppdm.errors."""

import importlib
import inspect
import pkgutil

import ppdm
from ppdm import errors


def _ppdm_modules():
    for info in pkgutil.walk_packages(ppdm.__path__, prefix="ppdm."):
        yield importlib.import_module(info.name)


def test_error_and_warning_classes_are_defined_in_ppdm_errors():
    strays = sorted(
        f"{module.__name__}.{name}"
        for module in _ppdm_modules()
        for name, cls in inspect.getmembers(module, inspect.isclass)
        if cls.__module__ == module.__name__
        and issubclass(cls, (Exception, Warning))
        and module.__name__ != "ppdm.errors"
    )
    assert strays == []


def test_every_error_is_a_ppdm_error_and_listed():
    defined = {name for name, cls in inspect.getmembers(errors, inspect.isclass) if cls.__module__ == "ppdm.errors"}
    assert defined == set(errors.__all__)
    warning_classes = {"UnheldValueWarning", "UninformativeKnowledgeWarning", "UnseenValueWarning"}
    for name in defined - warning_classes:
        assert issubclass(getattr(errors, name), errors.PpdmError), name
    assert all(issubclass(getattr(errors, name), UserWarning) for name in warning_classes)


def test_infeasible_error_carries_its_conflicting_rows():
    error = errors.InfeasibleError("infeasible", ("rate[0]", "sa[1]"))
    assert isinstance(error, errors.MaxEntError) and error.conflict == ["rate[0]", "sa[1]"]
