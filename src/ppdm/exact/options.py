"""The settings of the exact audit's integer search (:mod:`ppdm.exact.search`), in one object.

:func:`ppdm.exact.exact_bounds` takes them as ``options=``; the defaults are the settings its
benchmarks were run with (``benchmarks/README.md``, the exact section).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ppdm.errors import check_options

Engine = Literal["auto", "milp", "cp-sat"]

#: The integer engines: HiGHS branch and bound (many bounds per solve), CP-SAT, or by size.
ENGINES: tuple[Engine, ...] = ("auto", "milp", "cp-sat")


@dataclass(frozen=True)
class SearchProgress:
    """Where the integer search is (what :attr:`SearchOptions.progress` is called with): the
    ``phase`` (``"first dataset"``: finding a dataset consistent with what is published; then
    ``"certainty"`` while some group may still be proved certain; then ``"bounds"``: the other
    minima and maxima), the ``components`` still searched of ``total`` (independent parts of the
    problem), the groups ``proved`` certain so far and those still ``open`` (neither proved nor
    refuted), the ``seconds`` spent and the ``time_limit`` (``None``: none). Groups are the
    search's own, people of one known-values group and one class merged."""

    phase: str
    components: int
    total: int
    proved: int
    open: int
    seconds: float
    time_limit: float | None


@dataclass(frozen=True)
class SearchOptions:
    """Settings of the integer search; every field has the default it was tuned at."""

    #: The integer engine: ``"milp"`` (HiGHS branch and bound, :mod:`ppdm.exact.milp`: many bounds
    #: per solve), ``"cp-sat"``, or ``"auto"`` (HiGHS on components of at least
    #: ``milp_min_vars`` variables, CP-SAT on smaller ones). ``None``: CP-SAT, the engine trees and
    #: forests were tuned on; :func:`~ppdm.attacks.models.exact.exact_attack` asks for ``"auto"`` on rule
    #: sets, where it was measured faster.
    engine: Engine | None = None
    #: With ``engine="auto"``, components with at least this many variables go to HiGHS (on small
    #: ones CP-SAT answers within milliseconds).
    milp_min_vars: int = 300
    #: CP-SAT workers (the machines this runs on have few cores).
    workers: int = 2
    #: Seconds a CP-SAT certainty or backbone question may take before its best dataset so far is
    #: taken (doubled each time a question refutes nothing): datasets found early settle counts
    #: while the optimum is still far.
    backbone_seconds: float = 4.0
    #: Seconds per nonzero of the rows a CP-SAT model of a component takes to build (the 2.6
    #: million of 100 LightGBM rounds on Adult: 7.5 s at load 3, 17 s at load 5): no model is
    #: built with less time left than that (the budget is not overrun for a model never solved).
    cp_sat_build_seconds: float = 3e-6
    #: Open counts asked about in one CP-SAT backbone question.
    chunk: int = 300
    #: Intermediate solutions kept from one CP-SAT call.
    harvest: int = 64
    #: Open bounds asked about in one branch-and-bound question.
    milp_chunk: int = 5000
    #: Relative gap at which a branch-and-bound solve stops: a dataset passing most of what can be
    #: passed at once is as good as the best one (the next solve takes the rest); proofs do not
    #: depend on it.
    milp_gap: float = 0.1
    #: A branch-and-bound solve passing fewer open bounds than this turns to the neighbourhood
    #: search (:mod:`ppdm.exact.local`).
    stall: int = 30
    #: Records a dataset of the neighbourhood search may change.
    local_records: int = 16
    #: Whether datasets one or two record moves from the first one (:mod:`ppdm.exact.moves`)
    #: refute candidates before any solver is asked.
    record_moves: bool = True
    #: Whether candidate certain values are refuted by datasets changing only the groups most
    #: alike to each (:mod:`ppdm.exact.freed`) before the LP step (on by default for forests:
    #: :func:`~ppdm.attacks.models.exact.exact_attack`; not measured on rule sets).
    freed_groups: bool = False
    #: Whether candidate certain values are refuted by datasets made of pairs of record moves
    #: that nearly cancel (:mod:`ppdm.exact.pairs`) before the freed groups (on by default for
    #: forests: :func:`~ppdm.attacks.models.exact.exact_attack`; measured on boosting rounds).
    swap_pairs: bool = False
    #: The most row families (trees) in which a pair's two moves may fail to cancel, in turn: the
    #: nearer pairs' relaxation is nearly integral and fast. On 100 LightGBM rounds the first
    #: solves at 6, 8 and 10 took 0.6, 1.2 and 3.9 s; at 12 branch and bound took 24 s to a
    #: dataset (benchmarks/README.md).
    pair_distances: tuple[int, ...] = (6, 8, 10)
    #: Pairs at most this many families apart are offered to every solve (they rebalance the
    #: others); farther ones only when they move an open candidate. Each in turn, with every
    #: distance: more helpers reach further but solve slower (100 LightGBM rounds, the first
    #: solve at distance 6: 2,369 people in 0.6 s with 4, 2,401 in 0.9 s with 6, 2,906 in 7 s
    #: with 8; a 25 s search left 9,585, 9,328 and 10,353 people undecided, and 9,014 with 6
    #: then 8).
    pair_helpers: tuple[int, ...] = (6, 8)
    #: Seconds the pair stage may take in all (per component), and at most this share of the
    #: budget left when it starts.
    pair_seconds: float = 30.0
    pair_share: float = 0.9
    #: The pair stage runs only with at least this many people of open candidates (on a 10-tree
    #: forest of 1,000 records with a sensitive input its solves found nothing in 8 s each, where
    #: the freed groups refute each candidate in hundredths of a second).
    pair_min_people: int = 1000
    #: Seconds one pair solve may take (its best dataset so far is taken).
    pair_solve_seconds: float = 8.0
    #: The pair stage stops after a dataset refuting fewer people than this.
    pair_stall: int = 50
    #: Groups freed per question, tried in turn while none is found (the candidate's own first).
    freed_sizes: tuple[int, ...] = (300, 1000)
    #: Whether a freed-groups question also asks to go beyond the other open candidates among
    #: the freed groups (one Boolean each; otherwise any dataset moving the candidate will do).
    freed_flags: bool = False
    #: Whether a freed-groups question asks for the dataset moving the most people of open
    #: candidates among the freed groups (one linear objective; the last of ``freed_sizes``
    #: groups freed) rather than for the candidate's own count to drop.
    freed_most: bool = False
    #: Seconds one freed-groups question may take.
    freed_solve_seconds: float = 2.0
    #: Seconds the freed-groups stage may take in all (per component), and at most this share of
    #: the budget left when it starts.
    freed_seconds: float = 30.0
    freed_share: float = 0.6
    #: Partners tried per record move before giving up on it.
    move_partners: int = 8
    #: The most candidates per component whose LP bound is computed one by one (each costs one LP).
    lp_candidates: int = 400
    #: How close to 0 or 1 a share of the interior point must be to leave a count a candidate of
    #: the LP step.
    interior_tol: float = 1e-5
    #: Seconds of the budget an LP of the LP step needs left to start: HiGHS's interior point and
    #: crossover overrun its time limit (18.8 s for a 2 s limit, 100 LightGBM rounds on Adult).
    lp_reserve: float = 5.0
    #: scipy's HiGHS method for the LP step: ``"highs"`` lets HiGHS choose (dual simplex), which
    #: took 170 s where ``"highs-ipm"`` (interior point and crossover) took 26 s on one sum over
    #: 52,628 counts and 29,008 rows (100 XGBoost rounds on Adult, the insider).
    lp_method: str = "highs"
    #: Called with a :class:`SearchProgress` after each stage of the search and whenever a new
    #: consistent dataset is seen (often: the caller decides how often to show it); ``None``: quiet.
    progress: Callable[[SearchProgress], None] | None = None

    def __post_init__(self) -> None:
        check_options(self)  # a flag 'no' or a time limit '5' is refused here, naming the field
