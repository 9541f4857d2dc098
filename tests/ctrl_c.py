"""A Ctrl-C as a terminal sends it, for the tests of stops (issue 47 items 10, 11, 18).

Why a harness: a terminal's Ctrl-C is SIGINT to the whole foreground process group, the command's
pool workers and Ray's processes included, not to the command alone (GPUPLAN_INTERRUPT_AFTER_SOLVES
signals only the command's own process). So the command is started in a session of its own
(start_new_session: its own group, SIGINT at its default, as a shell's foreground job has it; a
background shell would start it with SIGINT ignored) and the group is signalled with os.killpg at a
point that does not depend on the machine's speed: when a line appears on its stderr, or when its
pool's worker processes exist. Every process it starts carries a marker in its environment (and
TMPDIR points to a folder of its own, short: Ray's socket paths under it must stay within 107
bytes), so the processes left behind after it exits are counted by scanning /proc. No assertion reads a clock: HANG_SECONDS is only the guard against a hang.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.builders import HANG_SECONDS, ROOT

MARKER = "GPUPLAN_TEST_MARKER"
"""An environment variable every process the command starts inherits (Ray's too): how leftovers are found."""


@dataclass
class Stopped:
    """What a command signalled with Ctrl-C did: exit code, output, and the processes it left behind."""

    returncode: int
    stdout: str
    stderr: str
    leftovers: list[str] = field(default_factory=list)   # "pid cmdline" of each marked process still alive
    signalled: bool = False                               # the trigger came before the command ended


def marked(marker: str) -> list[str]:
    """The live processes (not zombies) whose environment carries `marker`, as "pid cmdline"."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if f"{MARKER}={marker}".encode() not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry.name} {command}")
        except OSError:   # gone meanwhile, or not ours to read
            continue
    return found


Trigger = Callable[[list[str], str], bool]
"""When to send the Ctrl-C: called with the stderr lines so far and the run's marker."""


def workers_started(words: str = "spawn_main") -> Trigger:
    """A trigger: a process of the command whose command line has `words` exists (a spawned pool
    worker's has `from multiprocessing.spawn import spawn_main`): the pool is starting."""
    return lambda lines, marker: any(words in p for p in marked(marker))


def line_with(pattern: str) -> Trigger:
    """A trigger: a line of the command's stderr matches the regular expression `pattern` (re.search)."""
    found = re.compile(pattern)
    return lambda lines, marker: any(found.search(line) for line in lines)


def ctrl_c(args: list[str], when: Trigger, env: dict[str, str] | None = None) -> Stopped:
    """Run `gpuplan ARGS` in its own session; SIGINT to its process group once `when` holds; then wait
    for it to exit and list the processes it left (alive the moment it exited: none may outlive it)."""
    marker = uuid.uuid4().hex
    temp = tempfile.mkdtemp(prefix="gp-")
    try:
        return _run(args, when, {**os.environ, "COLUMNS": "200", "TMPDIR": temp, MARKER: marker, **(env or {})},
                    marker)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _run(args: list[str], when: Trigger, full: dict[str, str], marker: str) -> Stopped:
    proc = subprocess.Popen([sys.executable, "-m", "solver.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=full, start_new_session=True)
    lines: list[str] = []
    out: list[str] = []
    readers = [threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")), daemon=True),
               threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)]
    for r in readers:
        r.start()
    signalled = _signal_when(proc, lambda: when(list(lines), marker))
    try:
        proc.wait(timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise AssertionError(f"hung after Ctrl-C: {''.join(lines)[-2000:]}") from None
    for r in readers:
        r.join(timeout=HANG_SECONDS)
    left = marked(marker)
    for entry in left:   # never leave them running for the next test
        _kill(int(entry.split()[0]))
    return Stopped(proc.returncode, "".join(out), "".join(lines), left, signalled)


def _signal_when(proc: subprocess.Popen, trigger: Callable[[], bool]) -> bool:
    """Poll `trigger` until it holds (then SIGINT to the group) or the command ends (False)."""
    deadline = time.monotonic() + HANG_SECONDS
    while proc.poll() is None and time.monotonic() < deadline:
        if trigger():
            os.killpg(proc.pid, signal.SIGINT)
            return True
        time.sleep(0.02)
    return False


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
