"""Exact disclosure: what holds in every dataset consistent with a published model.

``reconstruct`` (:mod:`ppdm.exact.reconstruct`) rebuilds a forest's training multiset when the
attacker knows only the model, and says which rows are in every consistent dataset.
"""
