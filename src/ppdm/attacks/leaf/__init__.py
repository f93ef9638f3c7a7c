"""Leaf attacks on a published tree or forest: the attacker's view of the leaves, k-anonymity, homogeneity and uniqueness, background knowledge, reconstruction."""
