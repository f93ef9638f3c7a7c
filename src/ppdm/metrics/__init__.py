"""Privacy metrics of what an attacker learns."""

from ppdm.metrics.divergence import individual_divergence, overall_divergence, top_k_individuals

__all__ = ["individual_divergence", "overall_divergence", "top_k_individuals"]
