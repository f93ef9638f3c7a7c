"""The rows of a maximum-entropy problem: linear blocks over the attacker's variables.

:class:`LinearBlock` and :class:`MaxEntProblem` (explicit slots P(q, slot)) and
:class:`FactoredProblem` (types shared by groups) hold the rows every builder in
:mod:`ppdm.maxent.constraints` writes and every solver in :mod:`ppdm.maxent.solvers` reads; the
exact audit (:mod:`ppdm.exact`) reads the same rows on whole counts. The lowest layer of maxent.
"""

from ppdm.maxent.rows.factored_problem import FactoredProblem
from ppdm.maxent.rows.problem import LinearBlock, MaxEntProblem

__all__ = ["FactoredProblem", "LinearBlock", "MaxEntProblem"]
