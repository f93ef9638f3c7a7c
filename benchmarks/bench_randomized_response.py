"""Time the full θ sweep of paper 001 §5: 12 θ values × 50 RR-ID3 trees on 10,000 Adult records.

Run: ``python benchmarks/bench_randomized_response.py [--reps 50] [--jobs 1 2] [--configs effective paper]``.

Each repetition disguises the 10,000 binarized training records (§5.1 step 3a), grows RR-ID3
on them (step 3b) and scores the tree on the 15,060 true test records (step 3c); all of it is
timed. Binarization and loading are not. ``effective``: nodes need 50 effective records
(``min_samples_split=50``, the configuration that meets the paper's accuracy); ``paper``: ID3
grown until pure (larger trees). Target (issue 5): the full sweep ≤ 60 s on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from ppdm.data.datasets import load_adult
from ppdm.learn import RandomizedResponseTreeClassifier
from ppdm.randomize import MedianBinarizer, disguise

THETAS = (0.1, 0.2, 0.3, 0.4, 0.45, 0.51, 0.55, 0.6, 0.7, 0.8, 0.9, 1.0)
CONFIGS = {"effective": {"min_samples_split": 50}, "paper": {"min_samples_split": 2, "effective_sizes": False}}
TARGET_SECONDS = 60.0


def one(train: pd.DataFrame, test: pd.DataFrame, theta: float, seed: tuple[int, int], params: dict) -> tuple[float, int]:
    g = disguise(train, theta, random_state=np.random.default_rng(list(seed)))
    model = RandomizedResponseTreeClassifier(theta=theta, **params).fit(g.drop(columns="income"), g["income"])
    correct = model.predict(test.drop(columns="income")) == test["income"].to_numpy(dtype=object)
    return float(np.mean(correct)), model.tree_.n_nodes


def sweep(train: pd.DataFrame, test: pd.DataFrame, reps: int, params: dict, jobs: int) -> tuple[float, float, list]:
    """Wall seconds, CPU seconds of this process (meaningful with one job) and the results."""
    tasks = [(t, (i, r)) for i, t in enumerate(THETAS) for r in range(reps)]
    cpu = time.process_time()
    start = time.perf_counter()
    if jobs == 1:
        out = [one(train, test, t, s, params) for t, s in tasks]
    else:
        out = Parallel(n_jobs=jobs, batch_size=max(1, len(tasks) // (8 * jobs)))(delayed(one)(train, test, t, s, params) for t, s in tasks)
    return time.perf_counter() - start, time.process_time() - cpu, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--configs", nargs="+", default=["effective", "paper"], choices=list(CONFIGS))
    args = parser.parse_args()

    train, _ = load_adult("train")
    test, _ = load_adult("test")
    binarizer = MedianBinarizer().fit(train.iloc[:10_000])
    train, test = binarizer.transform(train.iloc[:10_000].reset_index(drop=True)), binarizer.transform(test)

    print(f"UCI Adult, first 10,000 training rows binarized at the median (14 attributes + class), {len(test):,} test rows")
    print(f"python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}, {platform.machine()}, {os.cpu_count()} CPUs")
    print(f"{len(THETAS)} θ × {args.reps} repetitions = {len(THETAS) * args.reps} trees; each: disguise + fit + score on the test set")
    print("wall: elapsed seconds; cpu: this process's CPU seconds (one job only; cpu/2 is the sweep's")
    print("time on 2 otherwise idle cores, the figure to compare when the machine is shared)")
    print(f"{'config':<10} {'jobs':>4} {'wall s':>8} {'cpu s':>8} {'ms/tree':>8} {'mean nodes':>10} {'mean acc':>9}  target ≤ {TARGET_SECONDS:.0f} s on 2 cores")
    scale = args.reps / 50
    for config in args.configs:
        for jobs in args.jobs:
            wall, cpu, out = sweep(train, test, args.reps, CONFIGS[config], jobs)
            nodes = np.mean([n for _, n in out])
            acc = np.mean([a for a, _ in out])
            two_cores = wall if jobs >= 2 else cpu / 2
            full = two_cores / scale
            met = ("met" if full <= TARGET_SECONDS else "missed") + (f" (≈ {full:.0f} s for 50 repetitions)" if scale != 1 else "")
            cpu_s = f"{cpu:8.1f}" if jobs == 1 else f"{'-':>8}"
            print(f"{config:<10} {jobs:>4} {wall:8.1f} {cpu_s} {1000 * wall / len(out):8.1f} {nodes:10.0f} {acc:9.4f}  {met}")


if __name__ == "__main__":
    main()
