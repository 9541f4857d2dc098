"""Settings for the whole test run.

The commands' default budget (60 s, solver.commands.common.DEFAULT_MAX_SECONDS) is raised to the
hang guard for every command a test runs, in this process and in the subprocesses it starts: a
test's answer must not depend on how fast the machine is. Tests of the budget itself pass
--max-seconds, or inject a stop (tests/cli/test_anytime.py). The progress lines a command prints
every 10 s when stderr is not a terminal are off (how many appear depends on the machine's speed);
tests/cli/test_anytime.py turns them on where it checks them.

A command's MILP solves of CHILD_VARIABLES or more run in a child process (solver.engine.child), each
paying a Python start and an OR-Tools import; a test's answer does not depend on where HiGHS runs, so
every test solves in its own process (GPUPLAN_IN_PROCESS=1, inherited by the commands it starts)
except those marked `child_process`: tests/engine/test_child.py and tests/cli/test_ctrl_c.py, which
exercise the child and the stops end to end.

SIGINT ignored by whatever started the run (pytest-xdist's workers, a background shell) is set back
to Python's default, so the commands a test starts hear an injected Ctrl-C as a terminal's would.

Property-based tests (hypothesis) draw the same examples on every run by default, so CI's answer
does not depend on luck (a fresh clone once drew a catalog name too long for the file system
that earlier runs never had); `HYPOTHESIS_PROFILE=explore python -m pytest ...` draws new ones
each run, to look for such cases on purpose.
"""

import os
import signal

import pytest
from hypothesis import settings

from tests.builders import HANG_SECONDS

settings.register_profile("default", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

os.environ["GPUPLAN_MAX_SECONDS"] = str(HANG_SECONDS)   # assigned, not defaulted: a shell's own value must not leak in
os.environ["GPUPLAN_HEARTBEAT_SECONDS"] = "0"   # no progress lines: their count depends on speed
os.environ.pop("GPUPLAN_EXPERIMENTAL", None)   # the default solve path (solver.engine.switches): a shell's switch must not change answers
os.environ["GPUPLAN_IN_PROCESS"] = "1"   # the child's start-up only where a test is about the child (below)
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    # A runner that starts this process with SIGINT ignored (pytest-xdist's workers, `nohup … &`) hands
    # that to every command a test starts, and an ignored Ctrl-C never reaches the commands' own
    # handler: the Ctrl-C tests (tests/cli/test_anytime.py, test_ctrl_c.py) would see exit 0. Default
    # here: a handled signal is reset to the default at exec, an ignored one is inherited.
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _child_process_only_where_marked(request, monkeypatch):
    """Tests marked `child_process` solve as a command does by default: big MILPs in a child."""
    if request.node.get_closest_marker("child_process"):
        monkeypatch.delenv("GPUPLAN_IN_PROCESS", raising=False)
