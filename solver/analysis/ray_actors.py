"""Ray for the analyses that spread their work over processes (sweep, negotiate): a local Ray
instance or an existing cluster, the number of workers it offers, and one message when Ray is
missing or the cluster cannot be reached.

Why one module: `sweep --executor ray --address A` and `negotiate --ray A` take the same
addresses and must fail the same way (exit 2 naming the option), and a Ray instance this
command started is shut down by it, one it joined is left running. Shut down means gone: the
processes Ray started here (raylet, GCS, its agents, the workers and their solver children) are
waited for and killed when still there after a grace (issue 47: `ray::DashboardAgent` and
`RuntimeEnvAgent` outlived a stopped sweep), and they are started deaf to a terminal's Ctrl-C
(solver.analysis.workers), which the command's process alone hears.
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from typing import Iterator

from solver.analysis.workers import descendants, reap, sigint_held
from solver.errors import ProblemError

LOCAL = "local"   # start a Ray instance on this machine with the command's --jobs CPUs
_QUIET = {"include_dashboard": False, "logging_level": logging.ERROR, "log_to_driver": False}


def require_ray(key: str):
    """The `ray` module; exit 2 naming `key` (the option that asked for it) when it is not installed,
    so a command fails before it solves anything."""
    try:
        import ray
    except ImportError:
        raise ProblemError("Ray is not installed", key=key,
                           fix=f"pip install '.[ray]' (or pip install 'ray>=2.9'), or leave {key} out") from None
    return ray


@contextmanager
def ray_session(address: str | None, cpus: int, key: str) -> Iterator[object]:
    """The `ray` module, connected: to the cluster at `address` ("auto": the one this machine is
    part of), or, for None or "local", to a local instance with `cpus` CPUs started here."""
    ray = require_ray(key)
    started = not ray.is_initialized()
    before = set(descendants(os.getpid()))
    if started:
        try:
            with sigint_held():
                if address and address != LOCAL:
                    ray.init(address=address, **_QUIET)
                else:
                    ray.init(num_cpus=cpus, **_QUIET)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ProblemError(f"cannot reach the Ray cluster at {address!r}: {exc}", key=key,
                               fix=f"give the head node's address (ray status shows it), 'auto' on a cluster node, "
                                   f"or '{LOCAL}'") from None
    try:
        yield ray
    finally:
        if started:
            shut_down(ray, before)


def shut_down(ray, before: set[int]) -> None:
    """ray.shutdown(), then the processes Ray started below this one (those not in `before`) waited
    for, and killed when still there after the grace: none outlives the command."""
    started = [pid for pid in descendants(os.getpid()) if pid not in before]
    ray.shutdown()
    reap(started)


def cluster_cpus(ray) -> int:
    """The CPUs the connected Ray offers: how many one-CPU actors can work side by side."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
