"""Exact disclosure: what holds in every dataset consistent with a published model.

Per group of records sharing the attacker's known values and per sensitive value, the minimum and
maximum number of them holding it over all consistent datasets (:func:`exact_bounds`, network
flow where the rows form a network, CP-SAT otherwise); ``reconstruct``
(:mod:`ppdm.exact.reconstruct`) rebuilds a forest's training multiset when the attacker knows only
the model, and says which rows are in every consistent dataset.
"""

from ppdm.exact.bounds import ExactBounds
from ppdm.exact.options import SearchOptions
from ppdm.exact.problem import CountProblem, CountRows
from ppdm.exact.solve import exact_bounds

__all__ = ["CountProblem", "CountRows", "ExactBounds", "SearchOptions", "exact_bounds"]
