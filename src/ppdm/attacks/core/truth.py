"""The truth is feasible: the real training records satisfy every row an audit builds.

Every row of a maximum-entropy or exact audit is something the published model says about its
training records, so the records themselves must satisfy it (DESIGN.md, "the truth satisfies
every row, always"). :func:`check_truth` checks it on the attacker's table whenever the table
holds every unknown column; a violation means the table is not the data the model was trained on.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ppdm.data.qigroups import QIGroups
from ppdm.errors import DataError
from ppdm.maxent.rows.factored_problem import FactoredProblem
from ppdm.maxent.rows.problem import MaxEntProblem

#: Records by which the true table may miss a published count before the audit refuses it.
TRUTH_TOLERANCE = 1e-6


class _Table(Protocol):
    groups: QIGroups

    def truth(self) -> np.ndarray | None: ...


def check_truth(problem: MaxEntProblem | FactoredProblem, table: _Table) -> None:
    """The real records must satisfy every row built: otherwise the table is not the training data.

    Explicit slots: the records' P(q, slot); factored (a tree's or a forest's types): their type
    counts P(t).
    """
    joint = table.truth()
    if joint is None:
        return
    p = joint if isinstance(problem, FactoredProblem) else joint / table.groups.weights[:, None]
    violation = problem.violations(p) * table.groups.n_records
    if violation.max(initial=0.0) > TRUTH_TOLERANCE:
        _, _, _, names = problem.stacked()
        r = int(np.argmax(violation))
        raise DataError(
            f"the table contradicts what the model publishes: {names[r]} is off by {violation[r]:g} "
            "records on the table's own values (audit the model against the records it was trained on)"
        )
