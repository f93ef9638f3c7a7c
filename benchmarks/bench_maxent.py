"""Maximum-entropy solvers on the Adult instance of paper 000: ppdm next to cvxpy + Clarabel and IPOPT.

Run: ``PYTHONPATH=src python benchmarks/bench_maxent.py [--depths 4 5] [--linear-depths none]
[--skip-clarabel] [--skip-ipopt] [--timeout 600] [--ppdm-timeout 1800] [--repeats 3]``
(needs the ``test`` extra: cvxpy, clarabel, casadi).

The instance (paper 000 §5): UCI Adult training rows, ``education`` as the sensitive and class
attribute, the 8 categorical quasi-identifiers (4,480 QI groups × 16 values = 71,680 variables),
one ID3 tree (Gini, multiway) per ``max_depth`` published with error rates; the attacker uses the
rate, label and SA constraints (§4.1, §4.3) and, for the nonlinear problems, the Gini
internal-node constraints (§4.2, built by ``ppdm.maxent.constraints.internal``).

Problems and solvers, each in a fresh subprocess (one after the other, never in parallel):

* ``linear D`` (rate + label + SA rows; QI row sums implicit):
  ppdm ``solve_linear``; cvxpy + Clarabel (``Maximize(sum(entr(P)))`` on the joint P(q, x), row
  sums = P(q), ``A_eq P == b``, ``A_le P <= b``); IPOPT 3.14 through casadi (same objective on the joint,
  ``tol`` = ``constr_viol_tol`` = 1e-10, MUMPS), from a cold start and from ppdm's solution.
* ``internal D`` (the linear rows plus the internal-node constraints): ppdm ``solve_with_internal``;
  IPOPT, from ppdm's linear solution, on a lifted model (one extra variable per branch × class for the branch's class mass
  m = Σ_{q ∈ branch} P(q, ·), linear equalities tying them to P, and the Gini constraints
  Σ_k coef_jk · (−Σ_x m_kx² / n_k) ≤ 0 on them: the Hessian stays diagonal; without lifting it
  holds a dense |branch|² block per branch and class).

The IPOPT models are casadi MX graphs (sparse constant matrices times the variable vector; exact
Hessian, diagonal). IPOPT is given the presolve ppdm uses: variables that are exactly 0 in ppdm's
linear solution (its forced zeros: classes a leaf holds no record of, the other classes of pure
leaves) are removed, a variable left as the only free one of its QI group is fixed to P(q), and
rows left without a free variable are dropped. "IPOPT, cold start" starts from the uniform
distribution over each group's free values with IPOPT's default initialisation: that is the speed
comparison. "from ppdm" starts from ppdm's linear solution with a warm-start initialisation
(``bound_push`` = ``bound_frac`` = 1e-12, ``mu_init`` = 1e-9, mu-based bound multipliers; the
defaults would move every P(q, x) ≈ 1e-5 to 0.01): that is a check of ppdm's optimum (linear)
and an independent local solve (internal; the linear solution violates the internal constraints).
"IPOPT lifted, from ppdm" starts from ppdm's own solution with internal constraints (``tol``
1e-12, ``constr_viol_tol`` 1e-14, ``mu_init`` 1e-11): a check that ppdm's answer is a stationary
point, i.e. that IPOPT finds no more entropy nearby without violating a constraint.
Clarabel gets the raw problem (an interior-point method needs no such help) at its default
tolerances 1e-8 (``--clarabel-tol``; at 1e-9 and 1e-10 it ends "optimal_inaccurate" after more
iterations with the same entropy to 5e-9). IPOPT's and cvxpy's times include building the model
(casadi graph, cvxpy canonicalisation); the ``solve s`` column is the solver's own time.

Each run is a subprocess: ``time s`` is measured around the solve inside it (median of
``--repeats`` for the linear problems, one run with internal constraints), ``peak MB`` is the
subprocess's peak resident set size (VmHWM: all memory, not only Python allocations; not
``ru_maxrss``, which Linux carries over fork and exec from the driver), ``+MB`` the peak during the
solve (VmHWM reset just before it) minus the resident size just before it (instance loaded,
solver library imported): the memory the solve itself added. Violations are absolute, on the
scale of the joint probabilities P(q, x): ``lin viol`` the largest violation of any linear row
(for the peers also the QI row sums), ``int viol`` the largest positive c_j(P) of the internal-node constraints (each multiplied by P(node), as
``ppdm.maxent.constraints.internal`` writes them; shown for the linear solutions too, where they are not
imposed). ``ΔH`` = H(peer) − H(ppdm) on the same problem (positive: the peer found more entropy).
Entropies are H(X | Q) in nats. The internal-node constraints are nonconvex: every entropy of an
``internal`` row is a local optimum.

Targets (issue): linear ≤ 1 s and ≥ 20× faster than cvxpy + Clarabel; with internal constraints
≤ 60 s.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

N_VALUES = 16


# -- the instance ---------------------------------------------------------------------------------
def build_instance(depth: int | None, with_internal: bool) -> dict:
    """The paper-000 Adult problem for an ID3 Gini tree of ``max_depth`` = ``depth``."""
    from ppdm.data.datasets import load_adult
    from ppdm.data.qigroups import QIGroups
    from ppdm.learn import ID3Classifier
    from ppdm.maxent.constraints.internal import internal_constraints
    from ppdm.maxent.constraints.tree_constraints import Knowledge, tree_problem

    df, roles = load_adult("train", sensitive="education", class_attribute="education")
    qi = [c for c in roles.quasi_identifiers if df[c].dtype == "category"]
    tree = ID3Classifier(criterion="gini", max_depth=depth).fit(df[qi], df["education"]).tree_.published("error-rates")
    tree.class_attribute = "education"
    if list(tree.classes) != list(df["education"].cat.categories):
        raise SystemExit("the tree's classes are not in category order: the SA distribution would be misaligned")
    groups = QIGroups.from_frame(df, qi)
    codes = df["education"].cat.codes.to_numpy()
    problem, leaf = tree_problem(tree, groups, Knowledge(sa=True), np.bincount(codes, minlength=N_VALUES) / len(codes))
    internal = internal_constraints(tree, groups, leaf) if with_internal else None
    rows = {blk.name: blk.n_rows for blk in problem.blocks}
    return {
        "problem": problem,
        "internal": internal,
        "info": {
            "depth": depth,
            "records": len(df),
            "groups": groups.n_groups,
            "values": problem.n_values,
            "variables": problem.n_variables,
            "rows": rows,
            "leaves": int(len(np.unique(leaf))),
            "internal": 0 if internal is None else internal.n_constraints,
        },
    }


# -- measurements shared by every solver ------------------------------------------------------------
def row_sum_violation(problem, p: np.ndarray) -> float:
    joint = p * problem.weights[:, None]
    return float(np.abs(joint.sum(axis=1) - problem.weights).max())


def measure(problem, internal, p: np.ndarray, qi_rows: bool) -> dict:
    """Entropy and violations of a solution p (groups × values)."""
    lin = float(problem.violations(p).max(initial=0.0))
    if qi_rows:
        lin = max(lin, row_sum_violation(problem, p))
    out = {"entropy": problem.entropy(np.maximum(p, 0.0)), "lin_viol": lin, "min_p": float(p.min())}
    if internal is not None:
        joint = p * problem.weights[:, None]
        out["int_viol"] = float(np.maximum(internal.values(joint), 0.0).max(initial=0.0))
    return out


def _status_mb(field: str, pid: str = "self") -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    except (OSError, ValueError):
        pass
    return None


def mark_solve_start() -> float:
    """Mark the start of the solve: note the load phase's peak, reset the peak, return the RSS.

    ``ru_maxrss`` cannot be used here: Linux carries it over fork and exec, so every worker would
    report at least the driver's resident size (≈ 200 MB with pandas and the instance loaded).
    VmHWM belongs to the worker's own address space, and writing 5 to clear_refs resets it.
    """
    global LOAD_PEAK
    LOAD_PEAK = _status_mb("VmHWM")
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass
    now = _status_mb("VmRSS")
    return now if now is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


LOAD_PEAK: float | None = None


# -- workers (each runs in its own subprocess) ---------------------------------------------------------
def work_ppdm_linear(inst: dict, args: argparse.Namespace, ctx: dict) -> dict:
    from ppdm.maxent.solvers.solve import solve_linear

    problem, internal = inst["problem"], inst["internal"]
    ctx["baseline"] = mark_solve_start()
    times, sol = [], None
    for _ in range(args.repeats):
        start = time.perf_counter()
        sol = solve_linear(problem)
        times.append(time.perf_counter() - start)
    np.save(ctx["save"], sol.p)
    return {"seconds": statistics.median(times), "status": sol.status, "reported_violation": sol.max_violation,
            "detail": f"{sol.n_classes} classes, {sol.newton_steps} Newton, {sol.iterations} L-BFGS",
            **measure(problem, internal, sol.p, qi_rows=True)}


def work_ppdm_internal(inst: dict, args: argparse.Namespace, ctx: dict) -> dict:
    from ppdm.maxent.solvers.nonlinear import solve_with_internal

    problem, internal = inst["problem"], inst["internal"]
    ctx["baseline"] = mark_solve_start()
    start = time.perf_counter()
    sol = solve_with_internal(problem, internal)
    seconds = time.perf_counter() - start
    np.save(ctx["save"], sol.p)
    return {"seconds": seconds, "status": sol.status, "reported_violation": sol.max_violation,
            "detail": f"{sol.n_classes} classes, {sol.iterations} steps, {sol.newton_steps} Newton",
            **measure(problem, internal, sol.p, qi_rows=True)}


def qi_rows_matrix(n_groups: int, n_values: int) -> sp.csr_matrix:
    return sp.kron(sp.identity(n_groups, format="csr"), np.ones((1, n_values)), format="csr")


def work_clarabel_linear(inst: dict, args: argparse.Namespace, ctx: dict) -> dict:
    import clarabel  # noqa: F401  (imported before the baseline is taken)
    import cvxpy as cp

    problem, internal = inst["problem"], inst["internal"]
    A, b, le, _ = problem.stacked()
    S = qi_rows_matrix(problem.n_groups, problem.n_values)
    ctx["baseline"] = mark_solve_start()
    tol = args.clarabel_tol
    times, P = [], None
    for _ in range(args.repeats):
        start = time.perf_counter()
        x = cp.Variable(problem.n_variables)
        cons = [S @ x == problem.weights]
        if (~le).any():
            cons.append(A[~le] @ x == b[~le])
        if le.any():
            cons.append(A[le] @ x <= b[le])
        prob = cp.Problem(cp.Maximize(cp.sum(cp.entr(x))), cons)
        prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol, tol_ktratio=tol, max_iter=500)
        times.append(time.perf_counter() - start)
        P, status = x.value, prob.status
        solve_time = prob.solver_stats.solve_time
        its = prob.solver_stats.num_iters
    if P is None:
        return {"seconds": statistics.median(times), "status": f"failed ({status})"}
    p = P.reshape(problem.n_groups, problem.n_values) / problem.weights[:, None]
    np.save(ctx["save"], p)
    detail = f"{its} IPM iterations"
    if ctx.get("start"):
        # the entropy is infinitely steep at 0: mass within tolerance on variables the constraints
        # force to 0 (ppdm's presolve fixes them) buys entropy that the exact problem does not have
        zero = np.load(ctx["start"]) == 0.0
        joint = np.maximum(P.reshape(p.shape), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            h_zero = -float(np.where(zero & (p > 0), joint * np.log(np.where(p > 0, p, 1.0)), 0.0).sum())
        detail += f"; {joint[zero].sum():.1e} mass on {zero.sum():,} forced zeros (+{h_zero:.1e} nats from them)"
    return {"seconds": statistics.median(times), "solve_seconds": solve_time, "status": status,
            "detail": detail, **measure(problem, internal, p, qi_rows=True)}


@dataclass
class Lifted:
    """The problem on the free variables after fixing ppdm's zeros (and the groups they settle)."""

    free: np.ndarray  # indices into the flattened joint
    const: np.ndarray  # the joint with the fixed values, 0 at free entries
    A: sp.csr_matrix  # rows × free
    lo: np.ndarray
    hi: np.ndarray
    logw: np.ndarray  # log P(q) of each free variable
    dropped_rows: int
    fixed_zero: int
    fixed_full: int
    row_info: dict = field(default_factory=dict)


def ipopt_presolve(problem, p_lin: np.ndarray) -> Lifted:
    """Remove ppdm's forced zeros; fix groups left with one free value; drop rows left empty."""
    g, k = problem.n_groups, problem.n_values
    w = problem.weights
    zero = p_lin == 0.0
    n_free_in_group = (~zero).sum(axis=1)
    single = (n_free_in_group == 1)[:, None] & ~zero
    const = np.where(single, w[:, None], 0.0).ravel()
    free = np.flatnonzero((~zero & ~single).ravel())
    A, b, le, _ = problem.stacked()
    S = qi_rows_matrix(g, k)
    rows = sp.vstack([S, A], format="csr")
    rhs = np.concatenate([w, b])
    is_le = np.concatenate([np.zeros(g, dtype=bool), le])
    shift = rows @ const
    A_free = sp.csr_matrix(rows[:, free])
    A_free.eliminate_zeros()
    live = np.diff(A_free.indptr) > 0
    lo = np.where(is_le, -np.inf, rhs - shift)
    hi = rhs - shift
    return Lifted(free, const, A_free[live], lo[live], hi[live], np.log(np.repeat(w, k)[free]),
                  int((~live).sum()), int(zero.sum()), int(single.sum()))


def _ipopt_options(args: argparse.Namespace, log: str, warm: bool, polish: bool = False) -> dict:
    opts = {
        "ipopt.tol": args.ipopt_tol,
        "ipopt.constr_viol_tol": args.ipopt_tol,
        "ipopt.max_iter": 3000,
        "ipopt.linear_solver": "mumps",
        "ipopt.print_level": 0,
        "ipopt.output_file": log,
        "ipopt.file_print_level": 5,
        "ipopt.sb": "yes",
        "print_time": False,
    }
    if warm:
        # start where ppdm's solution is: the default bound_push = 0.01 would move every variable
        # (each P(q, x) is ~1e-5) to 0.01, and mu_init = 0.1 would walk away from the point
        opts.update({"ipopt.bound_push": 1e-12, "ipopt.bound_frac": 1e-12, "ipopt.mu_init": 1e-9,
                     "ipopt.bound_mult_init_method": "mu-based"})
    if polish:
        # a stationarity check of a point that already meets every constraint: keep it feasible
        opts.update({"ipopt.tol": 1e-12, "ipopt.constr_viol_tol": 1e-14, "ipopt.mu_init": 1e-11})
    return opts


def _dm(m: sp.spmatrix):
    import casadi as ca

    m = sp.csc_matrix(m)
    m.sort_indices()
    return ca.DM(ca.Sparsity(m.shape[0], m.shape[1], m.indptr.tolist(), m.indices.tolist()), m.data.tolist())


def _ipopt_once(problem, internal, p_lin: np.ndarray, warm: bool, args: argparse.Namespace, log: str,
                p_start: np.ndarray | None = None) -> tuple[dict, np.ndarray, float, float]:
    """Build the casadi model (MX: sparse constant matrices times vectors) and solve it once."""
    import casadi as ca

    start = time.perf_counter()
    pre = ipopt_presolve(problem, p_lin)
    if warm:
        x0 = ((p_lin if p_start is None else p_start) * problem.weights[:, None]).ravel()[pre.free]
        x0 = np.maximum(x0, 1e-300)
    else:  # uniform over each group's free values
        free_mask = np.zeros(problem.n_variables, dtype=bool)
        free_mask[pre.free] = True
        per_group = free_mask.reshape(problem.n_groups, problem.n_values).sum(axis=1)
        x0 = np.repeat(problem.weights / np.maximum(per_group, 1), problem.n_values)[pre.free]
    x = ca.MX.sym("x", len(pre.free))
    f = ca.dot(x, ca.log(x) - ca.DM(pre.logw))  # −H(X | Q) = Σ P log(P / P(q))
    g_parts = [ca.mtimes(_dm(pre.A), x)]
    lbg, ubg = [pre.lo], [pre.hi]
    z, z0 = x, x0
    detail = f"{len(pre.free):,} free vars, {pre.A.shape[0]:,} rows"
    if internal is not None:
        k = problem.n_values
        M = sp.kron(internal.parts, sp.identity(k), format="csr")  # (parts·K) × (G·K)
        m_const = M @ pre.const
        M_free = sp.csr_matrix(M[:, pre.free])
        y0 = M_free @ x0 + m_const  # the lifted masses start consistent with x0
        y = ca.MX.sym("y", M.shape[0])
        # c_j = Σ_k coef_jk · (−Σ_x y_kx² / n_k) + const_j: a sparse matrix times y∘y
        Q = sp.csr_matrix(internal.coef @ sp.kron(sp.diags(-1.0 / internal.part_size), np.ones((1, k))))
        g_parts += [ca.mtimes(_dm(M_free), x) - y, ca.mtimes(_dm(Q), y * y) + ca.DM(internal.const)]
        lbg += [-m_const, np.full(internal.n_constraints, -np.inf)]
        ubg += [-m_const, np.zeros(internal.n_constraints)]
        z, z0 = ca.vertcat(x, y), np.concatenate([x0, y0])
        detail += f" + {M.shape[0]:,} lifted masses, {internal.n_constraints:,} internal"
    nlp = {"x": z, "f": f, "g": ca.vertcat(*g_parts)}
    n_x = len(pre.free)
    lbx = np.concatenate([np.zeros(n_x), np.full(z.shape[0] - n_x, -np.inf)])
    solver = ca.nlpsol("ipopt", "ipopt", nlp, _ipopt_options(args, log, warm, polish=p_start is not None))
    built = time.perf_counter()
    res = solver(x0=z0, lbx=lbx, ubx=np.inf, lbg=np.concatenate(lbg), ubg=np.concatenate(ubg))
    done = time.perf_counter()
    stats = solver.stats()
    joint = pre.const.copy()
    joint[pre.free] = np.asarray(res["x"]).ravel()[:n_x]
    p = joint.reshape(problem.n_groups, problem.n_values) / problem.weights[:, None]
    info = {"status": stats["return_status"], "success": bool(stats["success"]),
            "detail": f"{detail}, {stats['iter_count']} iterations" + ("" if warm else ", cold start")}
    return info, p, done - start, done - built


def work_ipopt(inst: dict, args: argparse.Namespace, ctx: dict) -> dict:
    import casadi  # noqa: F401  (imported before the baseline is taken)

    problem, internal = inst["problem"], inst["internal"]
    p_lin = np.load(ctx["start"])
    warm = not ctx.get("cold", False)
    p_start = np.load(ctx["polish"]) if ctx.get("polish") else None
    ctx["baseline"] = mark_solve_start()
    runs = []
    for _ in range(1 if ctx["with_internal"] else args.repeats):
        runs.append(_ipopt_once(problem, internal if ctx["with_internal"] else None, p_lin, warm, args, ctx["log"], p_start))
    info, p, _, _ = runs[-1]
    np.save(ctx["save"], p)
    return {"seconds": statistics.median(r[2] for r in runs), "solve_seconds": statistics.median(r[3] for r in runs),
            **info, **measure(problem, internal, p, qi_rows=True)}


WORKERS = {
    "ppdm_linear": work_ppdm_linear,
    "ppdm_internal": work_ppdm_internal,
    "clarabel_linear": work_clarabel_linear,
    "ipopt_linear": work_ipopt,
    "ipopt_linear_cold": work_ipopt,
    "ipopt_internal": work_ipopt,
    "ipopt_polish": work_ipopt,
}


def worker_main(args: argparse.Namespace) -> None:
    ctx = json.loads(args.worker_ctx)
    with open(ctx["instance"], "rb") as fh:
        inst = pickle.load(fh)
    result = WORKERS[ctx["job"]](inst, args, ctx)
    result["baseline_mb"] = ctx.get("baseline")
    result["solve_peak_mb"] = _status_mb("VmHWM")
    result["load_peak_mb"] = LOAD_PEAK
    with open(ctx["out"], "w") as fh:
        json.dump(result, fh)


# -- the driver ---------------------------------------------------------------------------------------
def run_job(job: str, ctx: dict, args: argparse.Namespace, timeout: float) -> dict:
    """Run one worker in a fresh subprocess (its VmHWM polled meanwhile); kill it at ``timeout``."""
    ctx = {**ctx, "job": job}
    argv = [sys.executable, os.path.abspath(__file__), "--worker-ctx", json.dumps(ctx),
            "--repeats", str(args.repeats), "--ipopt-tol", str(args.ipopt_tol), "--clarabel-tol", str(args.clarabel_tol)]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(ctx["err"], "w"), start_new_session=True)
    timed_out = False
    polled = 0.0
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        polled = max(polled, _status_mb("VmHWM", str(proc.pid)) or 0.0)
        if time.perf_counter() - start > timeout:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    peak = polled  # the child's own high-water mark as last seen (killed or failed runs)
    if timed_out:
        return {"status": "timeout", "seconds": float("nan"), "peak_mb": peak, "wall": time.perf_counter() - start}
    if proc.returncode != 0 or not Path(ctx["out"]).exists():
        tail = Path(ctx["err"]).read_text().strip().splitlines()[-1:] or ["?"]
        return {"status": f"failed ({tail[0][:60]})", "seconds": float("nan"), "peak_mb": peak}
    result = json.loads(Path(ctx["out"]).read_text())
    result["peak_mb"] = max(v for v in (result.get("solve_peak_mb"), result.get("load_peak_mb"), peak) if v is not None)
    return result


def git_state() -> str:
    """The commit of the ppdm sources, and whether src/ has uncommitted edits (read-only git calls)."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=root, capture_output=True, text=True, check=True).stdout.split("\n")
        changed = [line[3:] for line in dirty if line.strip()]
    except (OSError, subprocess.CalledProcessError):
        return "an unknown commit"
    return f"commit {head}" + (f" + uncommitted edits to {', '.join(changed)}" if changed else "")


def fmt(v, spec: str, width: int) -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return f"{'–':>{width}s}"
    return f"{v:{spec}}".rjust(width)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", nargs="*", default=["4", "5"], help="max_depth of the trees with internal constraints")
    parser.add_argument("--linear-depths", nargs="*", default=["none"], help="extra max_depth values (none = full depth), linear problem only")
    parser.add_argument("--skip-clarabel", action="store_true")
    parser.add_argument("--skip-ipopt", action="store_true")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per cvxpy / IPOPT run")
    parser.add_argument("--ppdm-timeout", type=float, default=1800.0, help="seconds per ppdm run")
    parser.add_argument("--repeats", type=int, default=3, help="timed solves per linear run (median)")
    parser.add_argument("--ipopt-tol", type=float, default=1e-10)
    parser.add_argument("--clarabel-tol", type=float, default=1e-8, help="tol_gap_abs/rel, tol_feas, tol_ktratio")
    parser.add_argument("--workdir", default=None, help="keep instances, solutions and IPOPT logs here")
    parser.add_argument("--worker-ctx", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker_ctx:
        worker_main(args)
        return

    import casadi
    import cvxpy

    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench_maxent_"))
    work.mkdir(parents=True, exist_ok=True)
    parse = lambda d: None if d.lower() in ("none", "full") else int(d)  # noqa: E731
    plan = [(parse(d), True) for d in args.depths]
    plan += [(parse(d), False) for d in args.linear_depths if parse(d) not in [p for p, _ in plan]]

    print("UCI Adult (train), education = sensitive and class attribute, 8 categorical QIs; ID3 (Gini, multiway),")
    print("error rates published; rate + label + SA constraints, Gini internal-node constraints where listed")
    print(f"python {platform.python_version()}, numpy {np.__version__}, cvxpy {cvxpy.__version__} + Clarabel, "
          f"casadi {casadi.__version__} (IPOPT, MUMPS), {platform.machine()}, {os.cpu_count()} cores")
    print(f"ppdm at {git_state()}")
    print(f"each solver in a fresh subprocess; linear times: median of {args.repeats}; timeouts {args.timeout:g} s "
          f"(peers), {args.ppdm_timeout:g} s (ppdm)")
    results = []
    for depth, with_internal in plan:
        tag = "full" if depth is None else str(depth)
        inst = build_instance(depth, with_internal)
        path = work / f"instance_{tag}.pkl"
        with open(path, "wb") as fh:
            pickle.dump(inst, fh)
        info = inst["info"]
        print(f"\nmax_depth={tag}: {info['leaves']:,} non-empty leaves, {info['variables']:,} variables, "
              + ", ".join(f"{n} {r:,}" for n, r in info["rows"].items())
              + (f", internal {info['internal']:,}" if with_internal else ""), flush=True)
        base = {"instance": str(path)}

        def job(name: str, problem: str, timeout: float, **extra) -> dict:
            stem = work / f"{name}_{problem.replace(' ', '_')}"
            ctx = {**base, "out": f"{stem}.json", "err": f"{stem}.err", "log": f"{stem}.ipopt.log", "save": f"{stem}.npy", **extra}
            Path(ctx["out"]).unlink(missing_ok=True)
            r = run_job(name, ctx, args, timeout)
            r.update(problem=problem, solver=name)
            results.append(r)
            print(f"  {name:16s} {r['status']:30s} {fmt(r.get('seconds'), '.2f', 8)} s "
                  f"{fmt(r.get('peak_mb'), '.0f', 6)} MB  {r.get('detail', '')}", flush=True)
            return r

        lin = f"linear {tag}"
        job("ppdm_linear", lin, args.ppdm_timeout)
        start = str(work / f"ppdm_linear_{lin.replace(' ', '_')}.npy")
        if not args.skip_clarabel:
            job("clarabel_linear", lin, args.timeout, **({"start": start} if Path(start).exists() else {}))
        if not args.skip_ipopt and Path(start).exists():
            job("ipopt_linear_cold", lin, args.timeout, start=start, with_internal=False, cold=True)
            job("ipopt_linear", lin, args.timeout, start=start, with_internal=False)
        if with_internal:
            nl = f"internal {tag}"
            job("ppdm_internal", nl, args.ppdm_timeout, with_internal=True)
            if not args.skip_ipopt and Path(start).exists():
                job("ipopt_internal", nl, args.timeout, start=start, with_internal=True)
                ppdm_nl = str(work / f"ppdm_internal_{nl.replace(' ', '_')}.npy")
                if Path(ppdm_nl).exists():
                    job("ipopt_polish", nl, args.timeout, start=start, with_internal=True, polish=ppdm_nl)

    print_table(results)
    (work / "results.json").write_text(json.dumps(results, indent=1, default=float))


NAMES = {"ppdm_linear": "ppdm solve_linear", "ppdm_internal": "ppdm solve_with_internal",
         "clarabel_linear": "cvxpy + Clarabel", "ipopt_linear_cold": "IPOPT, cold start", "ipopt_linear": "IPOPT, from ppdm",
         "ipopt_internal": "IPOPT lifted, from ppdm lin", "ipopt_polish": "IPOPT lifted, from ppdm"}


def print_table(results: list[dict]) -> None:
    print()
    head = (f"{'problem':12s} {'solver':25s} {'status':22s} {'time s':>8s} {'solve s':>8s} {'peak MB':>8s} {'+MB':>6s} "
            f"{'H (nats)':>14s} {'ΔH vs ppdm':>11s} {'lin viol':>9s} {'int viol':>9s} {'t ppdm/peer':>11s} {'MB ppdm/peer':>12s}")
    print(head)
    print("-" * len(head))
    ref = {r["problem"]: r for r in results if r["solver"].startswith("ppdm")}
    targets = []
    for r in results:
        own = ref.get(r["problem"])
        is_ppdm = r["solver"].startswith("ppdm")
        dh = None if is_ppdm or own is None or "entropy" not in r or "entropy" not in own else r["entropy"] - own["entropy"]
        t_ratio = None if is_ppdm or own is None else own.get("seconds", np.nan) / r.get("seconds", np.nan)
        m_ratio = None if is_ppdm or own is None or r["status"] == "timeout" else own.get("peak_mb", np.nan) / r.get("peak_mb", np.nan)
        grow = None if r.get("baseline_mb") is None or r.get("solve_peak_mb") is None else r["solve_peak_mb"] - r["baseline_mb"]
        status = r["status"] if "success" not in r else f"{r['status']}{'' if r['success'] else ' ✗'}"
        print(f"{r['problem']:12s} {NAMES[r['solver']]:25s} {status[:22]:22s} {fmt(r.get('seconds'), '.2f', 8)} "
              f"{fmt(r.get('solve_seconds'), '.2f', 8)} {fmt(r.get('peak_mb'), '.0f', 8)} {fmt(grow, '.0f', 6)} "
              f"{fmt(r.get('entropy'), '.10f', 14)} {fmt(dh, '+.1e', 11)} {fmt(r.get('lin_viol'), '.1e', 9)} "
              f"{fmt(r.get('int_viol'), '.1e', 9)} {fmt(t_ratio, '.3f', 11)} {fmt(m_ratio, '.2f', 12)}")
        if r["solver"] == "ppdm_linear":
            peer = next((q for q in results if q["problem"] == r["problem"] and q["solver"] == "clarabel_linear"), None)
            ok_time = r["seconds"] <= 1.0
            ratio = None if peer is None else peer.get("seconds", np.nan) / r["seconds"]
            ok_ratio = ratio is not None and ratio >= 20
            targets.append(f"{r['problem']}: ≤ 1 s {'met' if ok_time else 'MISSED'} ({r['seconds']:.2f} s); "
                           f"≥ 20× faster than Clarabel {'met' if ok_ratio else 'MISSED'}"
                           + ("" if ratio is None else f" ({ratio:.1f}×)"))
        if r["solver"] == "ppdm_internal":
            s = r.get("seconds", np.nan)
            targets.append(f"{r['problem']}: ≤ 60 s {'met' if s <= 60 else 'MISSED'} ({s:.1f} s, {r['status']})")
    print("targets: " + "\n         ".join(targets))


if __name__ == "__main__":
    main()
