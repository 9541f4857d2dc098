"""Calibration's writers: a measured MFU written into a problem YAML or a copy of a catalog with the
fewest changed lines (comments and layout kept), never over a file unless asked to, each target
checked by solver.files.check_new_file.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
from datetime import date
from pathlib import Path

from solver import files
from solver.errors import ProblemError
from solver.tools.calibrate.measure import Calibration


def set_job_mfu(text: str, job: str, mfu: float, note: str = "") -> str:
    """The problem YAML text with `mfu:` of job `job` set, every other line untouched.

    Block-style job items only (`- name: x` then `key: value` lines); an existing `mfu:`
    line keeps its place, otherwise one is added right after `name:`. Raises ValueError
    when the job or the `jobs:` list cannot be found in that style.
    """
    return set_job_key(text, job, "mfu", f"{mfu:.3f}", note)


def set_job_key(text: str, job: str, key: str, value: str, note: str = "") -> str:
    """The problem YAML text with `key: value` under job `job` (set_job_mfu's rules, any key)."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if re.match(r"jobs\s*:\s*(#.*)?$", ln.rstrip("\r\n"))), None)
    if start is None:
        raise ValueError("no top-level block `jobs:` key")
    items: list[list[int]] = []
    dash_col = None
    for i in range(start + 1, len(lines)):
        raw = lines[i].rstrip("\r\n")
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip())
        is_item = raw.lstrip().startswith("- ") or raw.strip() == "-"
        if dash_col is None:
            if not is_item:
                break
            dash_col = indent
        if indent < dash_col or (indent == dash_col and not is_item):
            break
        if indent == dash_col and is_item:
            items.append([])
        items[-1].append(i)
    for item in items:
        first = lines[item[0]]
        after_dash = first[dash_col + 1:]
        key_col = dash_col + 1 + len(after_dash) - len(after_dash.lstrip(" "))
        if after_dash.lstrip().startswith("{"):
            continue
        keys = {}
        for i in item:
            match = re.match(r"(\s*-?\s*)([A-Za-z_]\w*)\s*:(.*)$", lines[i].rstrip("\r\n"))
            if match and len(match.group(1)) == key_col:
                keys[match.group(2)] = (i, match.group(3))
        if "name" not in keys:
            continue
        named = re.sub(r"\s+#.*$", "", keys["name"][1]).strip().strip("'\"")
        if named != job:
            continue
        newline = "\r\n" if lines[keys["name"][0]].endswith("\r\n") else "\n"
        comment = f"  # {note}" if note else ""
        if key in keys:
            i = keys[key][0]
            prefix = re.match(rf"(\s*-?\s*{re.escape(key)}\s*:)", lines[i]).group(1)
            lines[i] = f"{prefix} {value}{comment}{newline}"
        else:
            i = keys["name"][0]
            if not lines[i].endswith(("\n", "\r")):
                lines[i] += newline
            lines.insert(i + 1, f"{' ' * key_col}{key}: {value}{comment}{newline}")
        return "".join(lines)
    raise ValueError(f"no block-style job named {job!r} under `jobs:`")


def calibrated_path(path: Path) -> Path:
    """problems/x.yaml → problems/x.calibrated.yaml (beside it, so a relative `catalog:` still works)."""
    return path.with_name(f"{path.stem}.calibrated{path.suffix or '.yaml'}")


def write_problem_mfu(path: str | Path, job: str, mfu: float, *, in_place: bool = False,
                      force: bool = False, note: str = "") -> Path:
    """Set job `job`'s mfu in a problem YAML; returns the file written.

    Writes `<name>.calibrated.yaml` beside the problem (refused if it exists, unless
    `force`), or the problem itself with `in_place`. Comments and layout survive: only
    the `mfu:` line and `mfu_measured: true` (the job's spread is then its measurement's,
    solver.estimate.spread) change or are added. The result is parsed and validated before it
    is written.
    """
    import yaml
    from pydantic import ValidationError

    from solver.ingest.readers import read_text
    from solver.model.problem import Problem

    path = Path(path)
    if not path.is_file():
        raise ProblemError("problem file not found", file=str(path), key="--write-problem", fix="check the path")
    text = read_text(path)
    try:  # measured: the job's spread is the measurement's, not the published runs' (solver.estimate.spread)
        new = set_job_key(set_job_mfu(text, job, mfu, note), job, "mfu_measured", "true")
    except ValueError as exc:
        raise ProblemError(str(exc), file=str(path), key="--job",
                           fix=f"write `mfu: {mfu:.3f}` under the job by hand (flow-style items are not edited)") from None
    try:
        problem = Problem.model_validate(yaml.safe_load(new))
    except (yaml.YAMLError, ValidationError) as exc:
        raise ProblemError(f"the edited problem does not validate ({str(exc).splitlines()[0]})", file=str(path),
                           key="--job", fix=f"write `mfu: {mfu:.3f}` under the job by hand") from None
    assert any(j.name == job and j.mfu is not None and abs(j.mfu - round(mfu, 3)) < 1e-9 and j.mfu_measured
               for j in problem.jobs)
    target = path if in_place else calibrated_path(path)
    # --in-place replaces the problem itself, which exists, but is not written through a link without --force
    files.check_new_file(target, "--write-problem", force=force or (in_place and not target.is_symlink()),
                         example=calibrated_path(path).name)
    files.write_text(target, new, newline="")  # atomic; the file's own line ends (read_text keeps CRLF)
    return target


def set_gpu_mfu(text: str, gpu: str, mfu: float, note: str = "") -> tuple[str, str, str]:
    """gpus.csv text with `gpu`'s default_mfu set and `note` appended to its source.

    Returns (new text, old line, new line); other lines are untouched. Raises ValueError
    when the GPU or the column is missing.
    """
    lines = text.splitlines(keepends=True)
    header = next(csv.reader([lines[0]])) if lines else []
    if "default_mfu" not in header or "gpu" not in header:
        raise ValueError("gpus.csv has no gpu or default_mfu column")
    g, m = header.index("gpu"), header.index("default_mfu")
    s = header.index("source") if "source" in header else None
    for i, line in enumerate(lines[1:], 1):
        row = next(csv.reader([line]), [])
        if len(row) > g and row[g].strip() == gpu:
            row[m] = f"{mfu:.3f}"
            if s is not None and note:
                row[s] = f"{row[s].strip()}; {note}"
            out = io.StringIO()
            csv.writer(out, lineterminator="").writerow(row)
            ending = line[len(line.rstrip("\r\n")):]
            new_line = out.getvalue() + ending
            old = line.rstrip("\r\n")
            lines[i] = new_line
            return "".join(lines), old, new_line.rstrip("\r\n")
    raise ValueError(f"no row for gpu {gpu!r}")


def write_catalog_mfu(catalog: str | Path, out: str | Path, gpu: str, mfu: float, *, force: bool = False,
                      note: str = "") -> tuple[Path, str, str]:
    """Copy a catalog folder to `out` with `gpu`'s default_mfu set; never overwrites without `force`."""
    catalog, out = Path(catalog), Path(out)
    if catalog.resolve() == out.resolve() and not force:
        raise ProblemError("refusing to overwrite the catalog itself", file=str(out), key="--catalog-out",
                           fix="write a new folder, or pass --force")
    src = catalog / "gpus.csv"
    try:
        new, old_line, new_line = set_gpu_mfu(src.read_text(encoding="utf-8"), gpu, mfu, note)
    except ValueError as exc:
        raise ProblemError(str(exc), file=str(src), key="--gpu",
                           fix="name a GPU of that gpus.csv (gpuplan catalog show)") from None
    if out.is_dir():   # a new folder is made below, with nothing in it to overwrite
        files.check_new_file(out / "gpus.csv", "--catalog-out", force=force, example="calibrated/gpus.csv")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise files.write_error(exc, out, "--catalog-out") from None
    copies = [(out / other.name, lambda tmp, other=other: shutil.copyfile(other, tmp))
              for other in sorted(catalog.iterdir())
              if other.is_file() and other.name != "gpus.csv" and not other.name.startswith(".")
              and other.resolve() != (out / other.name).resolve()]
    files.replace_together([*copies, (out / "gpus.csv", lambda tmp: tmp.write_text(new, encoding="utf-8"))], out)
    return out, old_line, new_line


def provenance(cal: Calibration) -> str:
    """The comment written beside a calibrated number."""
    how = f" over {cal.steps} steps" if cal.steps else ""
    return (f"calibrated {date.today().isoformat()} by gpuplan calibrate on {cal.gpu}: "
            f"{cal.tokens_per_sec_per_gpu:.0f} tokens/s/GPU{how}")   # no comma: stays one unquoted CSV cell
