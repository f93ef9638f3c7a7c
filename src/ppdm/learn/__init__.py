"""Tree learners: one grower with pluggable criterion, count source, admissibility and builder."""

from ppdm.learn.admissibility import Admissibility, AlwaysAdmissible, GroupedProposal, Proposal, ThresholdProposal
from ppdm.learn.counts import CountSource, ExactCounts
from ppdm.learn.criteria import Criterion, entropy, expected_impurity, get_criterion, gini
from ppdm.learn.estimators import C45Classifier, ID3Classifier
from ppdm.learn.grower import Grower, StoppingRules
from ppdm.learn.pruning import error_based_prune
from ppdm.learn.splitter import Candidate, SplitRules

__all__ = [
    "Admissibility", "AlwaysAdmissible", "C45Classifier", "Candidate", "CountSource", "Criterion",
    "ExactCounts", "GroupedProposal", "Grower", "ID3Classifier", "Proposal", "SplitRules", "StoppingRules",
    "ThresholdProposal", "entropy",
    "error_based_prune", "expected_impurity", "get_criterion", "gini",
]

from ppdm.learn.kanonymity import KAnonymousTreeClassifier, SpanAdmissibility, confidence_to_l

__all__ += ["KAnonymousTreeClassifier", "SpanAdmissibility", "confidence_to_l"]
from ppdm.learn.randomized import EstimatedCounts, RandomizedResponseTreeClassifier  # noqa: E402

__all__ += ["EstimatedCounts", "RandomizedResponseTreeClassifier"]

from ppdm.learn.tds import TDSClassifier, TopDownSpecialization  # noqa: E402

__all__ += ["TDSClassifier", "TopDownSpecialization"]
