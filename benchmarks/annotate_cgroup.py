"""A CPU cgroup for the beside-stats Celery worker (benchmarks/annotate.py --worker-cpu-max / --worker-cpu-weight).

`nice` does not hold a worker back on a kernel with autogroups: each session gets an equal share whatever its
processes' nice (benchmarks/README.md, "Reaching p99 < 50 ms beside statistics"). A cgroup does, and it is what a
deployment sets: docker-compose `cpus:` (a quota) and `cpu_shares:` (a weight), systemd `CPUQuota=`/`CPUWeight=`.

Two kernels' interfaces, the first found wins:
- cgroup v2 with the cpu controller (`/sys/fs/cgroup/cgroup.controllers` lists `cpu`): a child of the root with
  `cpu.max` ("<quota µs> <period µs>") and `cpu.weight` (1-10,000, default 100);
- cgroup v1's cpu controller (`/sys/fs/cgroup/cpu/`): `cpu.cfs_quota_us` with `cpu.cfs_period_us`, and
  `cpu.shares` (default 1,024; weight W is W × 1,024 / 100 shares).

The worker enters the group before it execs (a shell wrapper writes its own pid to `cgroup.procs`), so every
process it forks is in it from the start. Needs root (or a delegated cgroup); the error says which file refused.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PERIOD_US = 100_000


class CgroupUnavailable(RuntimeError):
    """No writable CPU cgroup hierarchy here; the message says what was tried and what refused."""


def _v2_root(root: Path) -> Path | None:
    controllers = root / "cgroup.controllers"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        return root
    return None


def _v1_root(root: Path) -> Path | None:
    cpu = root / "cpu"
    return cpu if (cpu / "cpu.cfs_quota_us").exists() else None


class WorkerCgroup:
    """A CPU cgroup named `name` with a quota of `cores` (0: none) and a relative `weight` (cgroup v2 units,
    100 = the default); `wrap(argv)` starts argv inside it; `remove()` deletes it once its processes are gone."""

    def __init__(self, name: str, cores: float = 0.0, weight: int = 0, root: Path = CGROUP_ROOT):
        if cores < 0 or not 0 <= weight <= 10_000:
            raise ValueError("cores must be >= 0 and weight within 1..10000 (0: unchanged)")
        self.cores, self.weight = cores, weight
        v2, v1 = _v2_root(root), _v1_root(root)
        if v2 is not None:
            self.version, self.path = 2, v2 / name
        elif v1 is not None:
            self.version, self.path = 1, v1 / name
        else:
            raise CgroupUnavailable(f"no cgroup v2 cpu controller ({root}/cgroup.controllers) and no cgroup v1 cpu "
                                    f"hierarchy ({root}/cpu/cpu.cfs_quota_us) on this machine")

    @property
    def description(self) -> str:
        parts = [f"cgroup v{self.version} {self.path}"]
        if self.cores:
            parts.append(f"quota {self.cores:g} cores")
        if self.weight:
            parts.append(f"weight {self.weight}" + (f" ({self.shares} shares)" if self.version == 1 else ""))
        return ", ".join(parts)

    @property
    def shares(self) -> int:
        return max(2, round(self.weight * 1024 / 100))

    def settings(self) -> dict[str, str]:
        """The files written and their values."""
        quota = str(round(self.cores * PERIOD_US)) if self.cores else None
        if self.version == 2:
            written = {"cpu.max": f"{quota} {PERIOD_US}" if quota else f"max {PERIOD_US}"}
            if self.weight:
                written["cpu.weight"] = str(self.weight)
            return written
        written = {"cpu.cfs_period_us": str(PERIOD_US), "cpu.cfs_quota_us": quota or "-1"}
        if self.weight:
            written["cpu.shares"] = str(self.shares)
        return written

    def create(self) -> None:
        try:
            if self.version == 2:  # the root must hand the cpu controller down to its children
                control = self.path.parent / "cgroup.subtree_control"
                if "cpu" not in control.read_text().split():
                    control.write_text("+cpu")
            self.path.mkdir(exist_ok=True)
            for name, value in self.settings().items():
                (self.path / name).write_text(value)
        except OSError as exc:
            raise CgroupUnavailable(f"cannot set up {self.path}: {exc}") from exc

    def wrap(self, argv: list[str]) -> list[str]:
        """argv run by a shell that first moves itself into the group, then execs it."""
        procs = self.path / "cgroup.procs"
        return ["sh", "-c", f'echo $$ > "{procs}" && exec "$@"', "sh", *argv]

    def throttled(self) -> dict[str, int]:
        """cpu.stat's counters: periods, throttled periods and time (how often the quota held the worker)."""
        stat = self.path / "cpu.stat"
        if not stat.exists():
            return {}
        return {key: int(value) for key, _, value in (line.partition(" ") for line in stat.read_text().splitlines())
                if value.strip().isdigit()}

    def remove(self, wait: float = 10.0) -> None:
        """Delete the group: its stragglers go back to the root first, and a group whose last processes are
        still exiting (EBUSY) is tried again for up to `wait` seconds."""
        deadline = time.monotonic() + wait
        while self.path.exists():
            try:
                for pid in (self.path / "cgroup.procs").read_text().split():
                    (self.path.parent / "cgroup.procs").write_text(pid)
                os.rmdir(self.path)
            except OSError:
                if time.monotonic() >= deadline:
                    return
                time.sleep(0.2)
