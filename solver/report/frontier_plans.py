"""frontier's plans (`frontier --plans DIR`): each point's verified plan as JSON, point-01.json,
point-02.json, … in x order.

Why in report: the files are the frontier's output, written through solver.files: one check of
the folder (before the solve and again at the write, in the same words), and every plan of a run
written together (replace_together): the new run's plans and none of an older run's, or the old
ones as they were.
"""

from __future__ import annotations

from pathlib import Path

from solver.analysis.frontier import Frontier
from solver.files import check_new_folder, existing_in, json_text, make_folder, replace_together

OPTION = "--plans"
PATTERN = "point-*.json"
"""A previous run's plans in the folder: replaced (and the extra ones removed) only with --force."""


def plan_paths(folder: str | Path, count: int) -> list[Path]:
    """Where each point's plan is written: point-01.json, point-02.json, … (x ascending)."""
    width = max(2, len(str(count)))
    return [Path(folder) / f"point-{i + 1:0{width}d}.json" for i in range(count)]


def check_plans_folder(folder: str | Path, *, force: bool = False) -> Path:
    """The folder the plans go to, checked before solving (solver.files.check_new_folder): new or a
    folder, and no plans of an earlier run in it unless force."""
    return check_new_folder(folder, OPTION, force=force, pattern=PATTERN)


def write_plans(result: Frontier, folder: str | Path, *, force: bool = False) -> list[Path]:
    """Each point's plan as JSON (Plan.model_dump(mode="json")); never overwrites unless force."""
    folder = make_folder(check_plans_folder(folder, force=force), OPTION)
    old = existing_in(folder, pattern=PATTERN)
    paths = plan_paths(folder, len(result.points))
    texts = [json_text(point.plan.model_dump(mode="json")) + "\n" for point in result.points]
    replace_together([(path, lambda tmp, text=text: tmp.write_text(text, encoding="utf-8"))
                      for path, text in zip(paths, texts)], folder,
                     remove=sorted(set(old) - set(paths)))   # all new plans and none of the old run's, or the old ones
    return paths
