"""Randomized response (paper 001): disguise records, estimate true proportions, accuracy, privacy.

* :func:`disguise` (§4.1): the respondent side, binary and multi-valued attributes;
* :func:`estimate_proportion`, :func:`estimate_conjunction`, :func:`estimate_table` (§4.2):
  P(E) from disguised data, equations 3 and their Kronecker-structured multi-valued extension;
* :func:`estimate_accuracy` (§4.3): a tree's accuracy from disguised test data;
* :func:`posterior_confidence`, :func:`ldp_epsilon` (§5.3): what θ protects;
* :class:`MedianBinarizer`, :class:`QuantileBinner` (§5.1): discretize before disguising.

The channel and its inverse live in :mod:`ppdm.randomize.channel` (shared with the RR-ID3
count source in :mod:`ppdm.learn.randomized`); the learner is
:class:`ppdm.learn.RandomizedResponseTreeClassifier`.
"""

from ppdm.randomize.accuracy import estimate_accuracy
from ppdm.randomize.channel import (
    apply_channel,
    clip_and_renormalise,
    indicator_lie,
    invert,
    lie_matrix,
)
from ppdm.randomize.estimate import estimate_conjunction, estimate_proportion, estimate_table
from ppdm.randomize.preprocess import MedianBinarizer, QuantileBinner, bin_numeric, binarize_at_median
from ppdm.randomize.privacy import (
    channel_matrix,
    ldp_epsilon,
    posterior,
    posterior_confidence,
    record_ldp_epsilon,
    record_posterior,
)
from ppdm.randomize.response import complement, disguise

__all__ = [
    "MedianBinarizer", "QuantileBinner", "apply_channel", "bin_numeric",
    "binarize_at_median", "channel_matrix", "clip_and_renormalise", "complement", "disguise",
    "estimate_accuracy", "estimate_conjunction", "estimate_proportion", "estimate_table",
    "indicator_lie", "invert", "ldp_epsilon", "lie_matrix", "posterior", "posterior_confidence",
    "record_ldp_epsilon", "record_posterior",
]
