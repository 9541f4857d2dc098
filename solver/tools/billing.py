"""Shared-rack bill: several companies rent one rack together (seed 002, FAQ).

Seed 002: "split by the GPU-hours each actually used, not by what each put in: agree a
base monthly rent shared equally, then weight power and bandwidth by each one's GPU
time; Slurm's sacct keeps the record, and the month-end bill is plain to all."

So: base rent / N tenants each; power and bandwidth in proportion to GPU-hours, which
come from `sacct -P` (pipe-separated, header line first). Amounts are whole cents
(fen) and every column is rounded by largest remainder, so each column adds up to its
input exactly and so do the tenants' totals.

Recommended export (allocations only, times cut to the month):

    sacct -a -X -P -T -S 2026-11-01 -E 2026-12-01 \\
          --format=JobID,JobName,User,Account,Partition,AllocTRES,Elapsed,Start,End,State > nov.txt

Without -X the job steps (`123.batch`, `123.extern`, `123.0`) are listed too; they are
skipped here, since the allocation (the line without a dot) holds the GPUs. Pass
`since`/`until` to cut each job to the billing period from its Start and End instead.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path

from solver.errors import ProblemError
from solver.files import csv_cell, save_atomic

TENANT_COLUMNS = {"account": "Account", "user": "User"}
_ELAPSED = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)(?:\.\d+)?$")


@dataclass(frozen=True)
class JobUsage:
    """One allocation: who, how many GPUs, for how many seconds (inside the period)."""

    job_id: str
    tenant: str
    gpus: int
    seconds: int
    line: int

    @property
    def gpu_seconds(self) -> int:
        return self.gpus * self.seconds


@dataclass(frozen=True)
class SacctUsage:
    source: str
    by: str
    jobs: list[JobUsage]
    skipped_steps: int

    def gpu_seconds(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for job in self.jobs:
            out[job.tenant] = out.get(job.tenant, 0) + job.gpu_seconds
        return out


def read_sacct(path: str | Path, by: str = "account", *, since: datetime | None = None,
               until: datetime | None = None) -> SacctUsage:
    """Allocations of a `sacct -P` (or `-p`) export, tenants by Account or User.

    Needs the columns JobID, AllocTRES, the tenant column and Elapsed (or Start and End
    when `since`/`until` cut jobs to a period). GPUs are `gres/gpu=N` in AllocTRES (or the
    sum of typed `gres/gpu:TYPE=N`); a job without a GPU TRES used none. Every bad cell
    is a ProblemError naming the file, line and column.
    """
    path = Path(path)
    if by not in TENANT_COLUMNS:
        raise ProblemError(f"unknown tenant key {by!r}", key="--by", fix="account or user")
    if not path.is_file():
        raise ProblemError("sacct file not found", file=str(path), fix="check the path")
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    numbered = [(n, ln) for n, ln in enumerate(lines, 1) if ln.strip()]
    if not numbered:
        raise ProblemError("empty sacct file", file=str(path), fix="export with sacct -P (header included)")
    head_no, head = numbered[0]
    header = head.split("|")
    trailing = header[-1] == ""            # `sacct -p` ends every line with a '|'
    if trailing:
        header = header[:-1]
    tenant_col = TENANT_COLUMNS[by]
    needed = ["JobID", "AllocTRES", tenant_col] + (["Start", "End"] if since or until else ["Elapsed"])
    missing = [c for c in needed if c not in header]
    if missing:
        hint = "JobID,JobName,User,Account,Partition,AllocTRES,Elapsed,Start,End,State"
        looks_like_data = bool(re.match(r"\d", head))
        raise ProblemError(f"missing column {missing[0]!r}" + (" (no header line?)" if looks_like_data else ""),
                           file=str(path), key=f"line {head_no}",
                           fix=f"export with sacct -P (without -n/--noheader) --format={hint}")
    col = {name: i for i, name in enumerate(header)}
    jobs: list[JobUsage] = []
    steps = 0
    for number, line in numbered[1:]:
        cells = line.split("|")
        if trailing and len(cells) == len(header) + 1 and cells[-1] == "":
            cells = cells[:-1]
        if len(cells) != len(header):
            raise ProblemError(f"{len(cells)} fields, the header has {len(header)}", file=str(path),
                               key=f"line {number}", fix="one job per line, '|'-separated as sacct -P writes it "
                                                         "(a '|' inside a job name breaks the columns)")
        job_id = cells[col["JobID"]].strip()
        if not job_id:
            raise ProblemError("empty JobID", file=str(path), key=f"line {number}, column JobID",
                               fix="export with sacct -P as it writes it (every line has a JobID)")
        if "." in job_id:                  # 123.batch, 123.extern, 123.0: steps of an allocation
            steps += 1
            continue
        where = f"line {number}, column "
        tenant = cells[col[tenant_col]].strip()
        if not tenant:
            raise ProblemError(f"empty {tenant_col}", file=str(path), key=where + tenant_col,
                               fix="give every job an account (sbatch -A), or split --by user")
        gpus = _gpus(cells[col["AllocTRES"]], str(path), where + "AllocTRES")
        if since or until:
            seconds = _clipped(cells[col["Start"]], cells[col["End"]], since, until, str(path), where)
        else:
            seconds = _elapsed(cells[col["Elapsed"]], str(path), where + "Elapsed")
        jobs.append(JobUsage(job_id, tenant, gpus, seconds, number))
    return SacctUsage(str(path), by, jobs, steps)


def _gpus(cell: str, file: str, key: str) -> int:
    plain, typed = None, 0
    for item in filter(None, (part.strip() for part in cell.split(","))):
        name, sep, value = item.partition("=")
        if not name.startswith("gres/gpu"):
            continue
        if not sep or not re.fullmatch(r"\d+", value.strip()):
            raise ProblemError(f"cannot read GPUs from {item!r}", file=file, key=key,
                               fix="AllocTRES as sacct writes it, e.g. cpu=64,gres/gpu=8,mem=500G,node=1")
        if name == "gres/gpu":
            plain = int(value)
        elif name.startswith("gres/gpu:"):
            typed += int(value)
    return plain if plain is not None else typed


def _elapsed(cell: str, file: str, key: str) -> int:
    match = _ELAPSED.match(cell.strip())
    if not match:
        raise ProblemError(f"not an elapsed time: {cell.strip()!r}", file=file, key=key,
                           fix="[D-]HH:MM:SS as sacct writes it, e.g. 1-02:03:04")
    days, hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def _clipped(start: str, end: str, since: datetime | None, until: datetime | None, file: str, where: str) -> int:
    begin = _stamp(start, file, where + "Start")
    if begin is None:                       # never started (pending, cancelled before start)
        return 0
    finish = _stamp(end, file, where + "End")
    if finish is None:                      # still running: up to the end of the period
        if until is None:
            raise ProblemError("running job without End; give the period's end", file=file, key=where + "End",
                               fix="--until 2026-12-01")
        finish = until
    lo = max(begin, since) if since else begin
    hi = min(finish, until) if until else finish
    return max(0, int((hi - lo).total_seconds()))


def _stamp(cell: str, file: str, key: str) -> datetime | None:
    cell = cell.strip()
    if cell in ("", "Unknown", "None"):
        return None
    try:
        return datetime.fromisoformat(cell)
    except ValueError:
        raise ProblemError(f"not a time: {cell!r}", file=file, key=key, fix="YYYY-MM-DDTHH:MM:SS") from None


def to_cents(value: str | int | float | Decimal, key: str) -> int:
    """An amount as whole cents; more than two decimals or a negative amount is an error."""
    try:
        amount = Decimal(str(value).strip().replace(",", "").replace("_", ""))
    except InvalidOperation:
        raise ProblemError(f"not an amount: {value!r}", key=key, fix="e.g. 48000 or 13572.37") from None
    if not amount.is_finite() or amount < 0:
        raise ProblemError(f"amount must be >= 0, got {value!r}", key=key, fix="e.g. 48000 or 13572.37")
    cents = amount * 100
    if cents != cents.to_integral_value():
        raise ProblemError(f"{value} has more than two decimals", key=key, fix="give the bill to the cent (fen)")
    return int(cents)


def largest_remainder(total: int, weights: dict[str, int]) -> dict[str, int]:
    """Split `total` cents in proportion to integer `weights`; the parts add up to `total`.

    Each part is the floor of its exact share, and the cents left over go one each to the
    largest remainders (ties: name order). So no part is off its exact share by a cent
    or more, and equal weights get parts at most a cent apart.
    """
    names = sorted(weights)
    whole = sum(weights.values())
    if whole <= 0:
        raise ValueError("weights must add up to more than 0")
    floors = {n: total * weights[n] // whole for n in names}
    left = total - sum(floors.values())
    order = sorted(names, key=lambda n: (-(total * weights[n] % whole), n))
    for n in order[:left]:
        floors[n] += 1
    return floors


@dataclass(frozen=True)
class TenantShare:
    tenant: str
    jobs: int
    gpu_seconds: int
    rent: int            # cents
    power: int
    bandwidth: int

    @property
    def gpu_hours(self) -> float:
        return self.gpu_seconds / 3600

    @property
    def total(self) -> int:
        return self.rent + self.power + self.bandwidth


@dataclass(frozen=True)
class Bill:
    currency: str
    rack_cost: int       # cents, as given
    power_cost: int
    bandwidth_cost: int
    tenants: list[TenantShare]
    by: str
    source: str
    skipped_steps: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def gpu_seconds(self) -> int:
        return sum(t.gpu_seconds for t in self.tenants)

    def share(self, t: TenantShare) -> float:
        return t.gpu_seconds / self.gpu_seconds if self.gpu_seconds else 0.0

    def totals(self) -> dict[str, int]:
        return {k: sum(getattr(t, k) for t in self.tenants) for k in ("rent", "power", "bandwidth", "total")}

    def rows(self) -> list[dict]:
        """One row per tenant then TOTAL; amounts as '1234.56' strings (exact)."""
        out = [{"tenant": t.tenant, "jobs": t.jobs, "gpu_hours": round(t.gpu_hours, 2),
                "share_pct": round(100 * self.share(t), 2), "rent": money(t.rent), "power": money(t.power),
                "bandwidth": money(t.bandwidth), "total": money(t.total)} for t in self.tenants]
        tot = self.totals()
        out.append({"tenant": "TOTAL", "jobs": sum(t.jobs for t in self.tenants),
                    "gpu_hours": round(self.gpu_seconds / 3600, 2), "share_pct": 100.0 if self.gpu_seconds else 0.0,
                    **{k: money(v) for k, v in tot.items()}})
        return out

    def to_dict(self) -> dict:
        return {"currency": self.currency, "by": self.by, "source": self.source,
                "inputs": {"rack_cost": money(self.rack_cost), "power_cost": money(self.power_cost),
                           "bandwidth_cost": money(self.bandwidth_cost),
                           "bill": money(self.rack_cost + self.power_cost + self.bandwidth_cost)},
                "rule": "rent split evenly; power and bandwidth by the GPU-hours each tenant used; "
                        "cents by largest remainder",
                "skipped_steps": self.skipped_steps, "tenants": self.rows()[:-1], "totals": self.rows()[-1],
                "notes": self.notes}


def money(cents: int) -> str:
    """Cents as an exact decimal string: 1234567 → '12345.67'."""
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def split_bill(usage: SacctUsage, rack_cost: str | Decimal | int | float, power_cost: str | Decimal | int | float,
               bandwidth_cost: str | Decimal | int | float, *, tenants: list[str] | None = None,
               currency: str = "CNY") -> Bill:
    """Rent evenly over the tenants, power and bandwidth by GPU-hours, to the cent.

    `tenants` names everyone sharing the rack, so that one who ran nothing still pays
    its rent share; without it the tenants are those in the sacct file. A tenant in the
    file but not in `tenants` is an error (a typo would otherwise move costs).
    """
    rent, power, bandwidth = (to_cents(v, k) for v, k in ((rack_cost, "--rack-cost"), (power_cost, "--power-cost"),
                                                          (bandwidth_cost, "--bandwidth-cost")))
    used = usage.gpu_seconds()
    counts: dict[str, int] = {}
    for job in usage.jobs:
        counts[job.tenant] = counts.get(job.tenant, 0) + 1
    names = sorted(set(tenants or []) | set(counts))
    if tenants:
        stray = sorted(set(counts) - set(tenants))
        if stray:
            job = next(j for j in usage.jobs if j.tenant == stray[0])
            raise ProblemError(f"{TENANT_COLUMNS[usage.by]} {stray[0]!r} is not among the tenants given",
                               file=usage.source, key=f"line {job.line}, column {TENANT_COLUMNS[usage.by]}",
                               fix=f"add --tenant {stray[0]}, or fix the account")
    if not names:
        raise ProblemError("no jobs and no tenants", file=usage.source, fix="check the sacct export or give --tenant")
    weights = {n: used.get(n, 0) for n in names}
    notes = []
    if sum(weights.values()) == 0:
        if power or bandwidth:
            raise ProblemError("no GPU-hours in the sacct file: power and bandwidth cannot be split by them",
                               file=usage.source, key="AllocTRES",
                               fix="export the allocations' AllocTRES (gres/gpu) for the billing month")
        weights = dict.fromkeys(names, 1)
    idle = [n for n in names if not used.get(n)]
    if idle:
        notes.append(f"no GPU-hours for {', '.join(idle)}: rent share only")
    rents = largest_remainder(rent, dict.fromkeys(names, 1))
    powers = largest_remainder(power, weights)
    bands = largest_remainder(bandwidth, weights)
    shares = [TenantShare(n, counts.get(n, 0), used.get(n, 0), rents[n], powers[n], bands[n]) for n in names]
    return Bill(currency, rent, power, bandwidth, shares, usage.by, usage.source, usage.skipped_steps, notes)


def write_csv(bill: Bill, path: str | Path) -> None:
    rows = bill.rows()

    def save(tmp: Path) -> None:
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows({k: csv_cell(v) for k, v in row.items()} for row in rows)  # tenant names stay text
    save_atomic(path, save)
