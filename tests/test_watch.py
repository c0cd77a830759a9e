"""`evcat lint --watch` and `evcat generate --watch`: run again on every save, stop cleanly on Ctrl-C."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from .conftest import ROOT, catalog_text


class Watcher:
    """An `evcat ... --watch` process whose output lines can be awaited."""

    def __init__(self, *arguments: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "generator", *arguments, "--watch"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = 60) -> list[str]:
        """Lines up to and including the first one containing ``text``."""
        deadline = time.monotonic() + timeout
        got: list[str] = []
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                continue
            got.append(line)
            self.seen.append(line)
            if text in line:
                return got
        raise AssertionError(f"no line with {text!r} within {timeout} s; saw:\n" + "\n".join(self.seen))

    def stop(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=30)
        rest: list[str] = []
        while not self.lines.empty():
            rest.append(self.lines.get())
        time.sleep(0.1)
        while not self.lines.empty():
            rest.append(self.lines.get())
        return self.process.returncode, "\n".join(rest)


def save(path: Path, text: str) -> None:
    time.sleep(0.05)  # a distinct modification time even on coarse clocks
    path.write_text(text, encoding="utf-8")


def test_lint_watch_reports_each_save(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    good = catalog_text()
    (catalog / "c.yaml").write_text(good)
    watcher = Watcher("lint", str(catalog), "--cache-dir", str(tmp_path / "cache"))
    try:
        first = watcher.wait_for("watching")
        assert any("no problems" in line for line in first), first
        save(catalog / "c.yaml", good.replace("version: 1.0.0", "version: one"))
        broken = watcher.wait_for("watching")
        assert any("changed: " in line and "c.yaml" in line for line in broken), broken
        assert any("CAT-SEMVER" in line for line in broken), broken
        save(catalog / "c.yaml", good)
        fixed = watcher.wait_for("watching")
        assert any("no problems" in line for line in fixed), fixed
        (catalog / "d.yaml").write_text(catalog_text(catalog_id="second").replace("title: Test catalog", "title: [unclosed"))
        added = watcher.wait_for("watching")
        assert any("d.yaml" in line and "CAT-YAML" in line for line in added), added
    finally:
        code, rest = watcher.stop()
    assert code == 0 and "stopped watching" in rest
    assert "Traceback" not in "\n".join(watcher.seen) + rest


def test_generate_watch_updates_out(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    good = catalog_text()
    (catalog / "c.yaml").write_text(good)
    out = tmp_path / "out"
    watcher = Watcher("generate", str(catalog), "-o", str(out), "--cache-dir", str(tmp_path / "cache"))
    try:
        assert any("wrote" in line for line in watcher.wait_for("watching"))
        page = next(out.glob("docs/events/*/*.html"))
        assert "Thing happened" in page.read_text()
        save(catalog / "c.yaml", good.replace("title: Thing happened", "title: Thing took place"))
        lines = watcher.wait_for("watching")
        assert any("wrote" in line for line in lines), lines
        assert "Thing took place" in page.read_text()
        save(catalog / "c.yaml", good.replace("version: 1.0.0", "version: one"))
        refused = watcher.wait_for("watching")
        assert any("nothing was generated" in line for line in refused), refused
        assert "Thing took place" in page.read_text()  # an error leaves OUT as it was
    finally:
        code, rest = watcher.stop()
    assert code == 0 and "stopped watching" in rest
