"""What the benchmarks that run a peer in a subprocess share: its peak memory and a memory cap."""

from __future__ import annotations

from pathlib import Path


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
