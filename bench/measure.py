"""How every benchmark here measures, in one place.

- ``run``: one command as a child process; wall time (perf_counter around the
  child's life, ended by ``os.wait4`` in a thread, so no polling delay) and
  CPU time (user + system of the child and of every descendant it reaped,
  e.g. forked workers joined by a pool, from the rusage ``wait4`` returns).
  With ``memory=True`` the process tree is sampled every ``interval``:
  the peak of the *sum* of the proportional set sizes (PSS, from
  /proc/PID/smaps_rollup) of all live processes of the tree, which counts a
  page that forked workers share with their parent once in all, and each
  process's own peak RSS (VmHWM, kept by the kernel, so exact up to the last
  sample before the process ended). No cgroup is needed: the tree is
  followed through /proc/PID/task/TID/children.
- ``tree_cpu``: CPU time so far of a live process and its descendants, for
  long-running servers (LSP, uvicorn).
- ``Rounds``: values per measurement gathered in alternating rounds,
  printed as median [min-max]; ratios are taken per round (the two sides back
  to back) and their median is the verdict, so load from the other programs
  sharing the machine falls on both sides of a ratio.
- ``Targets``: one line per target, ``met`` or ``MISSED``; the exit code is
  non-zero only with ``--strict`` (and a missed target).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MiB = 2**20


def check_checkout() -> None:
    """Say which ``generator`` package this benchmark runs (the repo root's,
    because the scripts put it first on sys.path and run children in it)."""
    sys.path.insert(0, str(ROOT))
    import generator

    location = Path(generator.__file__).resolve().parent
    if location != ROOT / "generator":
        raise SystemExit(f"generator is imported from {location}, not from this checkout {ROOT}")
    print(f"evcat under test: {location}", flush=True)


def child_env(**extra: str) -> dict[str, str]:
    """The environment for ``python -m generator`` of this checkout: its root
    first on PYTHONPATH, bytecode allowed (an installed wheel has it)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.update(extra)
    return env


def compile_checkout(root: Path = ROOT) -> None:
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "generator")], check=True)


# --- /proc readers ---------------------------------------------------------

_TICK = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat", "rb") as handle:
        return handle.read().rsplit(b")", 1)[1].decode().split()


def children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                found.extend(int(child) for child in handle.read().split())
    except (OSError, ValueError):
        pass
    return found


def tree(root: int) -> list[int]:
    """``root`` and its live descendants."""
    pids, stack = [], [root]
    while stack:
        pid = stack.pop()
        pids.append(pid)
        stack.extend(children(pid))
    return pids


def tree_cpu(root: int) -> float:
    """CPU seconds (user + system) so far of ``root``, of the children it has
    reaped (cutime, cstime) and of its live descendants."""
    total = 0
    for index, pid in enumerate(tree(root)):
        try:
            fields = _stat_fields(pid)
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
        if index == 0:
            total += int(fields[13]) + int(fields[14])  # cutime, cstime: reaped children
    return total / _TICK


def _pss_and_hwm(pid: int) -> tuple[int, int]:
    """(PSS, peak RSS) in bytes; PSS falls back to RSS without smaps_rollup."""
    pss = rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
                elif line.startswith(b"VmRSS:"):
                    rss = int(line.split()[1]) * 1024
        with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
            for line in handle:
                if line.startswith(b"Pss:"):
                    pss = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    return pss or rss, hwm


def tree_memory(root: int) -> tuple[int, dict[int, int]]:
    """(sum of PSS over the live tree, {pid: peak RSS}) now."""
    total, peaks = 0, {}
    for pid in tree(root):
        pss, hwm = _pss_and_hwm(pid)
        total += pss
        peaks[pid] = hwm
    return total, peaks


# --- one command -------------------------------------------------------------

@dataclass
class Sample:
    pid: int
    wall: float
    cpu: float
    max_rss: int  # the largest peak RSS of any one process of the tree (rusage)
    peak_pss: int = 0  # with memory=True: peak of the summed PSS of the live tree
    rss_peaks: dict[int, int] = field(default_factory=dict)  # with memory=True: each process's peak RSS
    stdout: str = ""
    stderr: str = ""

    @property
    def sum_of_peak_rss(self) -> int:
        return sum(self.rss_peaks.values())


class Failed(RuntimeError):
    pass


def run(command: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
        expect: int | None = 0, memory: bool = False, interval: float = 0.02, timeout: float = 600) -> Sample:
    """Run ``command`` to its end; see the module's docstring for what is measured."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, env=env, cwd=cwd)
        ended: dict[str, object] = {}

        def wait() -> None:
            _, status, usage = os.wait4(process.pid, 0)
            ended["time"] = time.perf_counter()
            ended["status"], ended["usage"] = status, usage

        waiter = threading.Thread(target=wait, daemon=True)
        waiter.start()
        peak, rss_peaks = 0, {}
        deadline = start + timeout
        while waiter.is_alive():
            if memory:
                total, peaks = tree_memory(process.pid)
                peak = max(peak, total)
                for pid, hwm in peaks.items():
                    rss_peaks[pid] = max(rss_peaks.get(pid, 0), hwm)
            waiter.join(interval if memory else 0.5)
            if time.perf_counter() > deadline and waiter.is_alive():
                for pid in reversed(tree(process.pid)):
                    try:
                        os.kill(pid, 9)
                    except OSError:
                        pass
                waiter.join()
                raise Failed(f"{' '.join(command[:6])}... took longer than {timeout:.0f} s (killed)")
        process.returncode = os.waitstatus_to_exitcode(ended["status"])  # type: ignore[arg-type]
        usage: resource.struct_rusage = ended["usage"]  # type: ignore[assignment]
        out.seek(0), err.seek(0)
        sample = Sample(
            pid=process.pid,
            wall=ended["time"] - start,  # type: ignore[operator]
            cpu=usage.ru_utime + usage.ru_stime,
            max_rss=usage.ru_maxrss * 1024,
            peak_pss=peak,
            rss_peaks=rss_peaks,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
        )
    if expect is not None and process.returncode != expect:
        raise Failed(f"{' '.join(command[:6])}... exited {process.returncode} (expected {expect}):\n"
                     f"{sample.stdout[-2000:]}{sample.stderr[-2000:]}")
    return sample


def run_parallel(commands: list[list[str]], **options) -> Sample:
    """Several commands at once (e.g. a peer sharded over the cores): wall time
    until the last ends; CPU and memory summed."""
    samples: list[Sample | BaseException] = [None] * len(commands)  # type: ignore[list-item]
    start = time.perf_counter()

    def one(index: int) -> None:
        try:
            samples[index] = run(commands[index], **options)
        except BaseException as error:  # noqa: BLE001 - re-raised below
            samples[index] = error

    threads = [threading.Thread(target=one, args=(index,)) for index in range(len(commands))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - start
    for sample in samples:
        if isinstance(sample, BaseException):
            raise sample
    done: list[Sample] = samples  # type: ignore[assignment]
    return Sample(
        pid=done[0].pid,
        wall=wall,
        cpu=sum(s.cpu for s in done),
        max_rss=max(s.max_rss for s in done),
        peak_pss=sum(s.peak_pss for s in done),
        rss_peaks={pid: peak for s in done for pid, peak in s.rss_peaks.items()},
        stdout="".join(s.stdout for s in done),
        stderr="".join(s.stderr for s in done),
    )


# --- rounds and targets -----------------------------------------------------

def alternate(round_: int, names: list[str]) -> list[str]:
    """``names`` in order on even rounds, reversed on odd ones."""
    return list(names) if round_ % 2 == 0 else list(reversed(names))


def spread(values: list[float], scale: float = 1.0, digits: int = 3) -> str:
    """``median [min-max]`` (n values)."""
    if not values:
        return "-"
    low, mid, high = min(values) * scale, statistics.median(values) * scale, max(values) * scale
    return f"{mid:.{digits}f} [{low:.{digits}f}-{high:.{digits}f}]"


class Rounds:
    """Samples per name, gathered in rounds; ratios are per round."""

    def __init__(self) -> None:
        self.samples: dict[str, list[Sample]] = {}

    def add(self, name: str, sample: Sample) -> Sample:
        self.samples.setdefault(name, []).append(sample)
        return sample

    def wall(self, name: str) -> list[float]:
        return [s.wall for s in self.samples.get(name, [])]

    def cpu(self, name: str) -> list[float]:
        return [s.cpu for s in self.samples.get(name, [])]

    def median(self, name: str, what: str = "wall") -> float:
        return statistics.median(getattr(self, what)(name))

    def ratios(self, name: str, peer: str, what: str = "wall") -> list[float]:
        """Per round: ``name`` over ``peer`` (rounds where both ran)."""
        mine, theirs = getattr(self, what)(name), getattr(self, what)(peer)
        return [a / b for a, b in zip(mine, theirs)]

    def table(self, rows: list[tuple[str, str]], peer: str | None = None) -> None:
        """Wall and CPU seconds per row, median [min-max], and the median of
        the per-round ratios to ``peer``."""
        header = f"| {'measurement':58} | {'wall s, median [min-max]':>26} | {'CPU s, median [min-max]':>26} |"
        if peer:
            header += f" {'wall/peer':>20} | {'CPU/peer':>20} |"
        print(header)
        print("|" + "|".join("-" * (len(part) + 0) for part in header.split("|")[1:-1]) + "|")
        for label, name in rows:
            if not self.samples.get(name):
                continue
            line = f"| {label:58} | {spread(self.wall(name)):>26} | {spread(self.cpu(name)):>26} |"
            if peer:
                if self.samples.get(peer):
                    line += f" {spread(self.ratios(name, peer), digits=2):>20} | {spread(self.ratios(name, peer, 'cpu'), digits=2):>20} |"
                else:
                    line += f" {'':>20} | {'':>20} |"
            print(line)


class Targets:
    def __init__(self) -> None:
        self.missed: list[str] = []
        self.count = 0

    def check(self, label: str, value: float | None, limit: float, unit: str = "", at_least: bool = False,
              note: str = "", applies: bool = True) -> bool:
        """Print ``target LABEL <= LIMIT: met|MISSED (VALUE)``; None: not measured (a timeout).
        ``applies=False``: the target is set for another size; the value is shown, not judged."""
        sign = ">=" if at_least else "<="
        if not applies:
            shown = "not measured" if value is None else f"{value:.3g}{unit}"
            print(f"(target {label} {sign} {limit:g}{unit}: not judged at this size; {shown}{', ' + note if note else ''})")
            return True
        self.count += 1
        if value is None:
            self.missed.append(label)
            print(f"target {label} {sign} {limit:g}{unit}: MISSED (TIMEOUT/hang{', ' + note if note else ''})")
            return False
        ok = value >= limit if at_least else value <= limit
        if not ok:
            self.missed.append(label)
        print(f"target {label} {sign} {limit:g}{unit}: {'met' if ok else 'MISSED'} ({value:.3g}{unit}{', ' + note if note else ''})")
        return ok

    def exit_code(self, strict: bool) -> int:
        print(f"{self.count - len(self.missed)} of {self.count} targets met"
              + ("" if strict else " (exit status 0 without --strict)"))
        return 1 if strict and self.missed else 0


def add_common_arguments(parser) -> None:
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
