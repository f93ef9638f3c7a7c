"""The long steps of an audit as steps (:class:`ppdm.progress.Step`): a forest's rows built tree by tree, the forest solver's and the exact search's phases, in words."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from ppdm.progress import Progress, Step, reporting
from ppdm.progress import report as report_step


def with_progress(run: Callable[..., Any]) -> Callable[..., Any]:
    """``run`` with its ``progress`` resolved (:func:`ppdm.progress.resolve`) and installed
    around it (:func:`ppdm.progress.reporting`), so that the loops deep inside report to it."""

    @wraps(run)
    def reported(*args: Any, progress: Progress | bool | None = None, **kwargs: Any) -> Any:
        if callable(progress) and takes_two(progress):
            warnings.warn(
                "progress(done, total) over a forest's trees is deprecated: progress= now takes a ppdm.progress.Step (every long step reports)",
                DeprecationWarning, stacklevel=2,
            )  # fmt: skip
            progress = trees_only(progress)
        with reporting(progress) as told:
            return run(*args, progress=told, **kwargs)

    return reported


#: The phase of a forest's rows built, tree by tree.
TREE_ROWS = "building each tree's rows"


def trees_only(trees: Callable[..., Any]) -> Progress:
    """The older ``trees(done, total)`` as a reporter hearing a forest's rows built, nothing else."""

    def hear(step: Step) -> None:
        if step.phase == TREE_ROWS and step.done is not None:
            trees(step.done, step.total)

    return hear


def takes_two(progress: Callable[..., Any]) -> bool:
    """Whether ``progress`` is the older ``progress(done, total)`` (two positional parameters, no default)."""
    try:
        parameters = inspect.signature(progress).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: a Step reporter such as list.append
        return False
    required = [p for p in parameters if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(required) == 2


#: The forest solver's phases (:class:`~ppdm.maxent.solvers.forest_solve.ForestProgress`), in words.
SOLVER_PHASES = {
    "bounds": "solving: proving empty types by bound propagation", "newton": "solving: Newton's method",
    "face": "solving: finding the face (linear programme)", "general": "solving: Newton's method (general driver)",
}


#: The exact audit's phases (:class:`~ppdm.exact.options.SearchProgress`), in words.
EXACT_PHASES = {
    "first dataset": "proving: finding a dataset consistent with the model", "certainty": "proving: settling who is certain",
    "bounds": "proving: settling the other counts", "interval ends": "proving: each group's interval ends by integer programmes",
}


def tree_rows(progress: Progress | bool | None) -> Callable[[int, int], None] | None:
    """A forest's rows built, tree by tree, as steps to ``progress``."""
    if not callable(progress):
        return None
    return lambda done, total: report_step(TREE_ROWS, done, total, "trees")


def solver_steps(progress: Progress | bool | None) -> Callable[[Any], None] | None:
    """The forest solver's :class:`~ppdm.maxent.solvers.forest_solve.ForestProgress` as steps to ``progress``."""
    if not callable(progress):
        return None

    def step(p: Any) -> None:
        off = "" if p.violation != p.violation else f"rows off by {p.violation:.1e}"  # NaN before the first step
        counted = p.budget is not None
        progress(Step(SOLVER_PHASES.get(p.phase, p.phase), p.step if counted else None, p.budget, "Newton steps at most" if counted else "", p.seconds, p.time_limit, off))

    return step


def exact_steps(progress: Progress | bool | None) -> Callable[[Any], None] | None:
    """The exact audit's :class:`~ppdm.exact.options.SearchProgress` as steps to ``progress``."""
    if not callable(progress):
        return None

    def step(p: Any) -> None:
        if p.phase == "interval ends":
            progress(Step(EXACT_PHASES[p.phase], p.components, p.total, "groups tried", p.seconds, p.time_limit, f"{p.proved:,} settled"))
            return
        parts = p.total > 1  # independent parts of the problem, searched one after the other
        progress(Step(EXACT_PHASES.get(p.phase, p.phase), p.components if parts else None, p.total if parts else None, "parts searched" if parts else "",
                      p.seconds, p.time_limit, f"{p.proved:,} groups proved certain, {p.open:,} open"))  # fmt: skip

    return step



@dataclass(frozen=True)
class Hearing:
    """Who hears an audit's long steps: a forest's rows built (``trees(done, total)``), the forest
    solver's reports and the exact search's."""

    trees: Callable[[int, int], None] | None = None
    solver: Callable[[Any], None] | None = None
    exact: Callable[[Any], None] | None = None


def hearing(progress: Progress | bool | None, solver: Callable[[Any], None] | None = None, exact: Callable[[Any], None] | None = None) -> Hearing:
    """``progress`` (resolved, :func:`with_progress`) told every long step, unless ``solver`` or
    ``exact`` hear the forest solver's or the exact search's own reports instead."""
    return Hearing(tree_rows(progress), solver if solver is not None else solver_steps(progress), exact if exact is not None else exact_steps(progress))
