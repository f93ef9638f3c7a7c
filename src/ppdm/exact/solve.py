"""One entry point: the fastest exact method for a count problem (docs/exact_disclosure.md).

Rows that form a network (one tree with class counts) go to flows (:mod:`ppdm.exact.network`),
everything else to the integer search (:mod:`ppdm.exact.search`).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Literal

import numpy as np

from ppdm.errors import MaxEntError
from ppdm.exact.bounds import ExactBounds
from ppdm.exact.classes import member_bounds, merge_classes
from ppdm.exact.network import network_bounds, network_form
from ppdm.exact.options import SearchOptions
from ppdm.exact.problem import CountProblem
from ppdm.exact.search import search_bounds, sound_steps

Method = Literal["auto", "network", "search"]
Detail = Literal["bounds", "certainty"]


def exact_bounds(
    problem: CountProblem, time_limit: float | None = None, truth: np.ndarray | None = None, method: Method = "auto", lp: bool = True,
    detail: Detail = "bounds", interior: np.ndarray | None = None, options: SearchOptions | None = None,
) -> ExactBounds:
    """Per group and sensitive value, the min and max count over every consistent dataset.

    ``truth``: the real records' counts per variable (a consistent dataset; it seeds the search).
    ``time_limit`` (seconds) bounds the integer search; what it leaves open is undecided.
    ``method``: ``"network"`` refuses rows that are not a network; ``"search"`` skips the flows.
    ``detail``: ``"certainty"`` settles who is certain exactly but may leave other minima and
    maxima as proved intervals (the network settles impossible values too and skips one maximum
    flow per movable count; the integer search stops once certainty is settled: the impossible
    values and bounds after it took minutes on a table of thousands); ``"bounds"`` settles every one. ``options``: the integer search's settings
    (:class:`~ppdm.exact.options.SearchOptions`), among them its engine: ``"milp"`` (HiGHS branch
    and bound, many bounds per solve), ``"cp-sat"`` (the default) or ``"auto"`` (HiGHS on large
    components); ``None``: the defaults.
    """
    if detail not in ("bounds", "certainty"):
        raise MaxEntError(f"unknown detail {detail!r} (bounds or certainty)")
    if method not in ("auto", "network", "search"):
        raise MaxEntError(f"unknown exact method {method!r} (auto, network or search)")
    if method != "search":
        form = network_form(problem)
        if form is not None:
            return _tight(network_bounds(problem, form, truth, full=detail == "bounds"))
        if method == "network":
            raise MaxEntError("the published rows do not form a network (only one tree's class counts do)")
    start = time.perf_counter()
    interior = problem.interior if interior is None else interior
    merged, class_of, class_truth = merge_classes(problem, truth)
    first = np.zeros(merged.n_groups, dtype=np.intp)
    first[class_of[::-1]] = np.arange(len(class_of))[::-1]
    inner = None if interior is None else np.asarray(interior)[first]
    bounds = member_bounds(search_bounds(merged, time_limit, class_truth, lp=lp, interior=inner, options=options, certainty_only=detail == "certainty"), class_of, problem.sizes)
    bounds.seconds = time.perf_counter() - start
    return _tight(bounds)


#: The LP step of :func:`sound_bounds` runs on components of at most this many row entries
#: (nonzeros of the count rows after merging interchangeable groups): the README's tree on Adult
#: (3,085 entries) takes 0.08 s and proves 30 people; a 10-tree forest of depth 8 on Adult
#: (164,121 entries) took 16 s for one LP that proved nobody, where propagation took 0.7 s.
SOUND_LP_NONZEROS = 20_000

#: Seconds the LP step of :func:`sound_bounds` may take in all (what it leaves open stays open).
SOUND_LP_SECONDS = 10.0


def sound_bounds(
    problem: CountProblem, truth: np.ndarray | None = None, interior: np.ndarray | None = None, options: SearchOptions | None = None,
    lp_nonzeros: int | None = SOUND_LP_NONZEROS, time_limit: float | None = SOUND_LP_SECONDS, small_only: bool = False,
) -> ExactBounds:
    """The certainties and impossible values the exact audit's fast sound steps prove, without
    its integer search: interchangeable groups merged, integer bound propagation over the counts,
    and the LP relaxation asked about the counts ``interior`` (a maximum-entropy estimate, groups
    × labels) holds at an end, on components of at most ``lp_nonzeros`` row entries, within
    ``time_limit`` seconds (:func:`ppdm.exact.search.sound_steps`; ``small_only``: those components
    alone). What it proves certain, the
    full search proves too; the search may prove more. Only ``min_lo`` and ``max_hi`` are proved
    (``certain``, ``impossible``); ``min_hi`` and ``max_lo`` are what ``truth`` shows."""
    start = time.perf_counter()
    merged, class_of, class_truth = merge_classes(problem, truth)
    first = np.zeros(merged.n_groups, dtype=np.intp)
    first[class_of[::-1]] = np.arange(len(class_of))[::-1]
    inner = None if interior is None else np.asarray(interior)[first]
    options = replace(options if options is not None else SearchOptions(), lp_reserve=0.0)  # HiGHS's simplex keeps its time limit
    bounds = member_bounds(sound_steps(merged, class_truth, inner, options, lp_nonzeros, time_limit, small_only), class_of, problem.sizes)
    bounds.method = "propagation+lp"
    bounds.seconds = time.perf_counter() - start
    bounds.tighten()
    if truth is not None:
        bounds.check()
    return bounds


def _tight(bounds: ExactBounds) -> ExactBounds:
    bounds.tighten()
    bounds.check()
    return bounds
