"""What the benchmarks that run a peer in a subprocess share: the run under limits, its peak memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def peak_gb() -> float | None:
    """The process's peak resident size (VmHWM), in GB (``None`` where /proc is missing)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20
    except (OSError, ValueError):
        pass
    return None


def cap_memory(gb: float) -> None:
    """Keep a runaway canonicalisation from taking the machine's memory (address-space limit)."""
    import resource

    limit = int(gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_peer(cmd: list[str], out: str, wall: float, memory: float, ours: Any) -> dict:
    """Run a peer's worker ``cmd`` (which writes its result JSON to ``out``, and its posterior to
    ``out + ".npy"``) under a wall-clock limit and a memory cap; ``delta`` is the largest difference
    of its posterior from ``ours``."""
    import json
    import os
    import subprocess
    import time

    import numpy as np

    start = time.perf_counter()
    try:
        subprocess.run(cmd, timeout=wall, check=False, env=os.environ.copy(), preexec_fn=lambda: cap_memory(memory))
    except subprocess.TimeoutExpired:
        return {"seconds": time.perf_counter() - start, "status": f"stopped at {wall:g} s"}
    if not os.path.exists(out):
        return {"seconds": time.perf_counter() - start, "status": f"crashed (more than {memory:g} GB?)"}
    result = json.loads(Path(out).read_text())
    if os.path.exists(out + ".npy"):
        result["delta"] = float(np.abs(np.load(out + ".npy") - ours).max())
    return result
