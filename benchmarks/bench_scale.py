"""How the cost of counting grows with the table: pandas against Dask, 3·10⁴ to 3·10⁷ rows (10⁸ optional).

Two tasks on synthetic Adult (:mod:`ppdm.data.synthetic`: Adult's records drawn with replacement,
numeric columns perturbed, written as Parquet partitions of at most 10⁶ rows):

* **audit**: the maximum-entropy audit (paper 000's setting: the attacker knows every split
  attribute, the class is sensitive) of one fixed published tree, ID3 of depth 4 on Adult's
  categorical columns; at each size the tree publishes its class counts on that size's table
  (computed before timing), so the records satisfy every published row.
* **kadet**: a kADET fit (paper 002, ID3 grower, k = 100, four public attributes with Adult's
  hierarchies, depth ≤ 4).

Each (task, backend, size) runs in its own subprocess, which reports its peak resident memory
(``VmHWM``, since its exec; ``os.wait4``'s ``ru_maxrss`` is kept too, but on Linux it is at least
the parent's size at fork) and its time from the imports on (reading the Parquet files included). The
pandas path reads the columns it needs into memory; the Dask path (local threaded scheduler)
counts partition by partition. Results go to ``scale_results.json`` and ``scale.png``.

    PYTHONPATH=src python benchmarks/bench_scale.py --sizes 30000,300000,3000000,30000000
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TREE_ATTRIBUTES = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "native-country"]
KADET_X = ["education", "marital-status", "relationship", "race", "sex", "workclass"]
KADET_PUBLIC = ["education", "marital-status", "race", "sex"]
CLASS = "income"


def data_dir(root: Path, n: int) -> Path:
    return root / f"n{n}"


def ensure_data(root: Path, n: int) -> Path:
    """Write the synthetic table of ``n`` rows unless it is there (seed 0)."""
    from ppdm.data.synthetic import write_scale_adult

    where, done = data_dir(root, n), root / f"n{n}.done"
    if not done.exists():
        write_scale_adult(where, n, min(1_000_000, math.ceil(n / 2)), seed=0)
        done.write_text(str(n))
    return where


def fixed_tree():  # type: ignore[no-untyped-def]
    """ID3 of depth 4 on real Adult's categorical columns: the tree every size audits."""
    from ppdm.data.datasets import load_dataset
    from ppdm.learn import ID3Classifier

    frame, _ = load_dataset("adult")
    model = ID3Classifier(max_depth=4).fit(frame[TREE_ATTRIBUTES], frame[CLASS])
    model.tree_.class_attribute = CLASS
    return model.tree_


def publish_on(tree, where: Path, out: Path) -> None:  # type: ignore[no-untyped-def]
    """The tree with every node's class counts taken on the table under ``where`` (one Dask pass)."""
    import dask.dataframe as dd

    from ppdm.data.counting import DaskCounting
    from ppdm.tree import save_tree
    from ppdm.tree.model import encode_categories

    k = len(tree.classes)
    frame = dd.read_parquet(str(where / "part-*.parquet"), columns=[*TREE_ATTRIBUTES, CLASS])

    def chunk(part, i):  # type: ignore[no-untyped-def]
        y = encode_categories(part[CLASS], tree.classes)
        return np.bincount(tree.apply(part) * k + y, minlength=tree.n_nodes * k).reshape(tree.n_nodes, k)

    leaf_counts = DaskCounting(progress=False).reduce(frame, chunk, lambda xs: sum(xs), "publishing")
    published = copy.deepcopy(tree)
    for node in sorted(published.nodes, key=lambda n: -n.depth):
        node.counts = leaf_counts[node.id].astype(float) if node.is_leaf else sum(published.nodes[c].counts for c in node.children)
        node.label = int(np.argmax(node.counts)) if node.counts.sum() > 0 else node.label
    save_tree(published, out, "class-counts")


# -- one case, in a subprocess ----------------------------------------------------------------------
def run_case(task: str, backend: str, where: Path, tree_file: Path) -> dict[str, object]:
    import pandas as pd

    start = time.perf_counter()
    if task == "audit":
        from ppdm.attacks.models.maxent import maxent_attack
        from ppdm.tree import load_tree

        tree = load_tree(tree_file)
        if backend == "dask":
            import dask.dataframe as dd

            frame = dd.read_parquet(str(where / "part-*.parquet"))
        else:
            frame = pd.read_parquet(where, columns=[*TREE_ATTRIBUTES, CLASS])
        result = maxent_attack(tree, frame, progress=False) if backend == "dask" else maxent_attack(tree, frame)
        out = {"groups": result.groups.n_groups, "records": result.groups.n_records,
               "divergence": result.details.get("overall_divergence"), "posterior_sum": float(result.posterior.sum())}
    else:
        from ppdm.data.hierarchy import adult_hierarchies
        from ppdm.learn.kanonymity import KAnonymousTreeClassifier

        if backend == "dask":
            import dask.dataframe as dd

            frame = dd.read_parquet(str(where / "part-*.parquet"))
        else:
            frame = pd.read_parquet(where, columns=[*KADET_X, CLASS])
        model = KAnonymousTreeClassifier(k=100, quasi_identifiers=KADET_PUBLIC, hierarchies=adult_hierarchies(), max_depth=4)
        model.fit(frame[KADET_X], frame[CLASS])
        out = {"nodes": model.tree_.n_nodes, "anonymity": int(model.anonymity_)}
    out["seconds"] = time.perf_counter() - start
    out["vm_hwm_mb"] = vm_hwm_mb()
    return out


def vm_hwm_mb() -> float | None:
    """This process's peak resident memory since its exec (``VmHWM``; ``ru_maxrss`` would also
    count the parent's memory at fork)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def measure(task: str, backend: str, n: int, where: Path, tree_file: Path, timeout: float) -> dict[str, object]:
    """Run one case in a subprocess: its result, wall time and peak RSS (from ``os.wait4``)."""
    cmd = [sys.executable, __file__, "--case", task, "--backend", backend, "--where", str(where), "--tree", str(tree_file)]
    load_before = os.getloadavg()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    start = time.perf_counter()
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            _, status, usage = os.wait4(proc.pid, 0)
            return {"task": task, "backend": backend, "rows": n, "skipped": f"over {timeout:.0f} s", "load": load_before}
        time.sleep(0.2)
    stdout, stderr = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    if status != 0:
        return {"task": task, "backend": backend, "rows": n, "error": stderr.strip().splitlines()[-1:], "load": load_before}
    found = json.loads(stdout.strip().splitlines()[-1])
    return {
        "task": task, "backend": backend, "rows": n, **found,
        "wall_seconds": time.perf_counter() - start,
        "peak_rss_mb": found.get("vm_hwm_mb") or usage.ru_maxrss / 1024,
        "ru_maxrss_mb": usage.ru_maxrss / 1024,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "load_before": load_before, "load_after": os.getloadavg(),
    }


def slope(rows: list[int], seconds: list[float]) -> float | None:
    """The slope of log(time) against log(rows): 1 is linear."""
    if len(rows) < 2:
        return None
    return float(np.polyfit(np.log10(rows), np.log10(seconds), 1)[0])


def markdown(results: list[dict[str, object]]) -> str:
    """The results as a Markdown table: one row per (task, size), pandas next to Dask."""
    lines = ["| task | rows | pandas s | pandas peak MB | Dask s | Dask peak MB | Dask / pandas time | load (1 min) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for task in ("audit", "kadet"):
        for n in sorted({int(r["rows"]) for r in results if r["task"] == task}):
            cell = {r["backend"]: r for r in results if r["task"] == task and r["rows"] == n}
            def show(backend: str, cell: dict = cell) -> tuple[str, str]:
                r = cell.get(backend)
                if r is None:
                    return "not run", ""
                if "seconds" not in r:
                    return str(r.get("skipped") or r.get("error")), ""
                return f"{r['seconds']:.1f}", f"{r['peak_rss_mb']:.0f}"
            (ps, pm), (ds, dm) = show("pandas"), show("dask")
            ratio = f"{float(ds) / float(ps):.2f}" if ps.replace(".", "").isdigit() and ds.replace(".", "").isdigit() else ""
            loads = [r.get("load_before", [None])[0] for r in cell.values()]
            load = ", ".join(f"{x:.1f}" for x in loads if x is not None)
            lines.append(f"| {task} | {n:,} | {ps} | {pm} | {ds} | {dm} | {ratio} | {load} |")
    return "\n".join(lines)


def plot(results: list[dict[str, object]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for task, marker in (("audit", "o"), ("kadet", "s")):
        for backend, color in (("pandas", "tab:blue"), ("dask", "tab:orange")):
            done = [r for r in results if r["task"] == task and r["backend"] == backend and "seconds" in r]
            if not done:
                continue
            rows = [r["rows"] for r in done]
            label = f"{task}, {backend}"
            axes[0].loglog(rows, [r["seconds"] for r in done], marker=marker, color=color, label=label, linestyle="-" if task == "audit" else "--")
            axes[1].loglog(rows, [r["peak_rss_mb"] for r in done], marker=marker, color=color, label=label, linestyle="-" if task == "audit" else "--")
    axes[0].set(xlabel="rows", ylabel="wall time (s)", title="time")
    axes[1].set(xlabel="rows", ylabel="peak RSS (MB)", title="peak memory")
    axes[1].axhline(4096, color="grey", linewidth=0.8, linestyle=":")
    for ax in axes:
        ax.grid(True, which="both", linewidth=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="30000,300000,3000000")
    parser.add_argument("--tasks", default="audit,kadet")
    parser.add_argument("--backends", default="pandas,dask")
    parser.add_argument("--root", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "ppdm_scale")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--out", type=Path, default=HERE / "scale_results.json")
    parser.add_argument("--png", type=Path, default=HERE / "scale.png")
    parser.add_argument("--report", action="store_true", help="print the table and slopes of --out, plot it, run nothing")
    parser.add_argument("--case"), parser.add_argument("--backend"), parser.add_argument("--where", type=Path), parser.add_argument("--tree", type=Path)
    args = parser.parse_args()
    if args.report:
        report(json.loads(args.out.read_text()), args.png)
        return
    if args.case:
        print(json.dumps(run_case(args.case, args.backend, args.where, args.tree)))
        return
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    tree = fixed_tree()
    results: list[dict[str, object]] = json.loads(args.out.read_text()) if args.out.exists() else []
    for n in sizes:
        where = ensure_data(args.root, n)
        tree_file = args.root / f"n{n}.tree.json"
        if not tree_file.exists():
            publish_on(tree, where, tree_file)
        for task in args.tasks.split(","):
            for backend in args.backends.split(","):
                found = measure(task, backend, n, where, tree_file, args.timeout)
                results = [r for r in results if (r["task"], r["backend"], r["rows"]) != (task, backend, n)] + [found]
                print(json.dumps(found), flush=True)
                args.out.write_text(json.dumps(results, indent=1))
    print(f"load average {os.getloadavg()}")
    report(results, args.png)


def report(results: list[dict[str, object]], png: Path) -> None:
    print(markdown(results))
    for task in ("audit", "kadet"):
        for backend in ("pandas", "dask"):
            done = sorted((r for r in results if r["task"] == task and r["backend"] == backend and "seconds" in r), key=lambda r: r["rows"])
            s = slope([r["rows"] for r in done], [r["seconds"] for r in done])
            if s is not None:
                top = slope([r["rows"] for r in done[-2:]], [r["seconds"] for r in done[-2:]])
                print(f"{task:6s} {backend:6s} log-log slope of time against rows: {s:.2f} over every size, "
                      f"{top:.2f} over the largest two ({done[-2]['rows']:,} to {done[-1]['rows']:,})")
    plot(results, png)


if __name__ == "__main__":
    main()
