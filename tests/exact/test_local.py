"""The neighbourhood search (ppdm.exact.local): datasets a few records from a known one."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ppdm.exact.local import Neighbourhood
from ppdm.exact.milp import MilpModel
from ppdm.exact.problem import CountRows


def _scarce() -> tuple[np.ndarray, np.ndarray, np.ndarray, list, np.ndarray]:
    """Four one-record groups, two values each (variable 2g: value 0, 2g + 1: value 1), groups 0
    and 1 at value 0, groups 2 and 3 at value 1. Published: groups 0, 1, 2 hold value 0 twice,
    and so do groups 0, 1, 3. Group 0 (or 1) leaves value 0 only if groups 2 and 3 both take it."""
    var_group = np.repeat(np.arange(4), 2)
    var_label = np.tile([0, 1], 4)
    sizes = np.ones(4, dtype=np.int64)
    A = sp.csr_matrix(np.array([[1, 0, 1, 0, 1, 0, 0, 0], [1, 0, 1, 0, 0, 0, 1, 0]]))
    rows = [(A, np.array([2, 2]), "eq", None, ["r0", "r1"])]
    x = np.array([1, 0, 1, 0, 0, 1, 0, 1])  # groups 0, 1 at value 0; 2, 3 at value 1
    return var_group, var_label, sizes, rows, x


def test_a_change_moves_the_target_and_keeps_every_row() -> None:
    var_group, var_label, sizes, rows, x = _scarce()
    hood = Neighbourhood(var_group, var_label, sizes, rows, x)
    check = MilpModel(var_group, sizes, rows, np.arange(8), 8)
    for group in (0, 1):
        delta = hood.change(group, 0, 1, True, None)
        assert delta is not None
        y = hood.spread(delta, group, 0, True)
        assert y is not None and check.holds(y)
        assert y[2 * group] == 0  # the target left value 0
        assert CountRows("r", rows[0][0], rows[0][1], "eq").holds(y).all()


def test_no_change_is_reported_as_none() -> None:
    var_group, var_label, sizes, rows, x = _scarce()
    forced = (sp.csr_matrix(np.array([[0, 0, 0, 0, 0, 0, 0, 1]])), np.array([1]), "eq", None, ["r2"])  # group 3 holds value 1
    hood = Neighbourhood(var_group, var_label, sizes, rows + [forced], x)
    assert hood.change(0, 0, 1, True, None) is None
    assert hood.change(2, 1, 1, True, None) is None
