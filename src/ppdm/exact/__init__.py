"""The exact audit: what is certain in every dataset consistent with the published model."""

from ppdm.exact.bounds import ExactBounds
from ppdm.exact.problem import CountProblem, CountRows
from ppdm.exact.solve import exact_bounds

__all__ = ["CountProblem", "CountRows", "ExactBounds", "exact_bounds"]
