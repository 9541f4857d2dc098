"""`gpuplan calibrate`: a known MFU is recovered from synthetic logs, and written without clobbering files."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from solver.tools import calibrate as cal
from solver.commands import calibrate as command
from solver.errors import ProblemError
from solver.load import load_catalog, load_problem
from tests.builders import ROOT

DATA = ROOT / "tests" / "data"
CATALOG = ROOT / "catalogs" / "beijing-sample"
GPUS = load_catalog(CATALOG).gpus

app = typer.Typer()
app.callback()(lambda: None)          # a group, so the command is invoked by its name
command.register(app)


def run(*args: str):
    result = CliRunner().invoke(app, ["calibrate", *map(str, args)])
    return result


def synthetic_log(path: Path, *, mfu: float, peak: float, factor: float, params: float, batch_tokens: float,
                  gpus: int, steps: int = 300, noise: float = 0.02, seed: int = 0) -> None:
    """A trainer-style log of a run whose true MFU is `mfu`: slow warm-up, noisy steps, unrelated lines."""
    rng = random.Random(seed)
    step_s = batch_tokens / (mfu * peak * 1e12 / (factor * params)) / gpus
    lines = ["INFO launching run", "INFO compiling model"]
    for s in range(1, steps + 1):
        t = step_s * (4.0 if s <= 3 else 1.0) * (1 + rng.uniform(-noise, noise))
        lines.append(f"[rank0] step {s}/{steps} | loss {9 - s / steps:.3f} | lr 1.0e-04 | time/step {t:.4f}s")
        if s % 50 == 0:
            lines.append(f"[rank0] saved checkpoint step_{s} in 12.5s")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("gpu,precision,kind,recompute,true_mfu,params", [
    ("A100-80G", "bf16", "pretrain", False, 0.42, 7e9),
    ("A100-80G", "bf16", "pretrain", True, 0.51, 13e9),
    ("H100-80G", "fp8", "full_finetune", False, 0.31, 70e9),
    ("H100-80G", "bf16", "lora", False, 0.37, 7e9),
])
def test_recovers_known_mfu_from_synthetic_log(tmp_path, gpu, precision, kind, recompute, true_mfu, params):
    from solver.estimate.flops import flops_factor

    row = GPUS[gpu]
    peak = row.fp8_tflops if precision == "fp8" else row.bf16_tflops
    log = tmp_path / "train.log"
    synthetic_log(log, mfu=true_mfu, peak=peak, factor=flops_factor(kind, recompute), params=params,
                  batch_tokens=1024 * 4096, gpus=64)
    steps = cal.read_step_log(log)
    assert len(steps.seconds) == 290 and steps.first_step == 11 and steps.last_step == 300
    result = cal.calibrate(row, params=params, kind=kind, precision=precision, recompute=recompute,
                           step_log=steps, global_batch_tokens=1024 * 4096, gpus=64)
    assert result.mfu == pytest.approx(true_mfu, rel=0.01)
    assert result.mfu_p10 < result.mfu < result.mfu_p90
    assert result.mfu_p10 > true_mfu * 0.97 and result.mfu_p90 < true_mfu * 1.03   # warm-up excluded


def test_bundled_log_through_the_cli():
    """tests/data/train-log.txt: 7B on 8 × A100-80G, global batch 64 × 4096, true MFU 0.42."""
    res = run("--gpu", "A100-80G", "--catalog", CATALOG, "--log", DATA / "train-log.txt",
              "--global-batch-tokens", 64 * 4096, "--gpus", 8, "--params", 7e9,
              "--nvidia-smi", DATA / "nvidia-smi.csv", "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["mfu"] == pytest.approx(0.42, abs=0.003)
    assert data["steps"] == 290 and data["warmup_skipped"] == 10
    assert data["assumed_mfu"] == 0.40 and data["within_baseline"] is True      # seed 002: within 10 %
    smi = data["smi"]
    assert smi["gpus"] == 8 and smi["samples"] == 320
    assert 90 < smi["mean_utilization_pct"] < 100 and 300 < smi["mean_power_w"] < 400
    assert smi["throttled_share"] == pytest.approx(30 / 312)                     # GPU 3 at 1110 of 1410 MHz
    assert any("throttled" in w for w in data["warnings"])


def test_text_output_names_mfu_spread_and_baseline():
    res = run("--gpu", "A100-80G", "--catalog", CATALOG, "--log", DATA / "train-log.txt",
              "--global-batch-tokens", 64 * 4096, "--gpus", 8, "--params", 7e9, "--warmup", 20)
    assert res.exit_code == 0, res.output
    assert "280 steps after 20 warm-up" in res.output
    assert "MFU 42.0%" in res.output and "p10–p90" in res.output
    assert "within the 10% a measured cost baseline is good to" in res.output


def test_tokens_per_second_gives_exact_mfu():
    a100 = GPUS["A100-80G"]
    tps = 0.42 * 312e12 / (6 * 7e9)
    assert cal.calibrate(a100, params=7e9, tokens_per_sec_per_gpu=tps).mfu == pytest.approx(0.42)
    # full recompute counts the extra forward pass: 8·N, as the planner's rate ÷ 8/6 assumes
    assert cal.calibrate(a100, params=7e9, tokens_per_sec_per_gpu=tps, recompute=True).mfu == pytest.approx(0.56)
    # MoE: the active parameters multiply each token
    moe = cal.calibrate(a100, params=47e9, active_params=13e9, tokens_per_sec_per_gpu=1000)
    assert moe.flops_per_token == 6 * 13e9
    far = cal.calibrate(a100, params=7e9, tokens_per_sec_per_gpu=tps * 0.8)
    assert not far.within_baseline and any("10%" in w for w in far.warnings)


def test_csv_and_megatron_formats(tmp_path):
    csv_log = tmp_path / "steps.csv"
    csv_log.write_text("step,step_time_ms\n" + "".join(f"{s},{2000 + (s % 3)}\n" for s in range(1, 41)))
    steps = cal.read_step_log(csv_log, warmup=5)
    assert steps.format == "csv" and len(steps.seconds) == 35 and 2.0 <= min(steps.seconds) <= 2.002
    mega = tmp_path / "megatron.log"
    mega.write_text("".join(
        f" iteration {s:8d}/  500000 | consumed samples: {s * 512:10d} | elapsed time per iteration (ms): "
        f"{1500.0 + s % 2:.1f} | learning rate: 3.0E-04 | lm loss: 7.1E+00 |\n" for s in range(1, 31)))
    steps = cal.read_step_log(mega)
    assert steps.format == "text" and len(steps.seconds) == 20 and steps.first_step == 11
    assert all(1.5 <= s <= 1.502 for s in steps.seconds)


def test_bad_inputs_are_problem_errors(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text("nothing to see\n")
    res = run("--gpu", "A100-80G", "--catalog", CATALOG, "--log", empty, "--global-batch-tokens", 1e6,
              "--gpus", 8, "--params", 7e9)
    assert res.exit_code == 2 and "empty.log" in res.output and "no step times" in res.output
    res = run("--gpu", "A100-80G", "--catalog", CATALOG, "--tokens-per-sec-per-gpu", 1e6, "--params", 7e9)
    assert res.exit_code == 2 and "exceeds 100%" in res.output
    assert "--tokens-per-sec-per-gpu:" in res.output and "--gpus" not in res.output  # the option given, not one absent
    res = run("--gpu", "A100-80G", "--catalog", CATALOG, "--tokens-per-sec-per-gpu", 3000, "--params", 7e9,
              "--precision", "fp8")
    assert res.exit_code == 2 and "FP8" in res.output
    with pytest.raises(ProblemError, match="warm-up"):
        short = tmp_path / "short.log"
        short.write_text("step 1 time/step 1.0s\nstep 2 time/step 1.0s\n")
        cal.read_step_log(short)


def test_write_problem_keeps_comments_and_never_overwrites(tmp_path):
    for f in ("seed-13b-100b.yaml", "debug-then-train.yaml"):
        shutil.copy(ROOT / "problems" / f, tmp_path / f)
    shutil.copytree(CATALOG, tmp_path / "catalogs" / "beijing-sample")
    for f in tmp_path.glob("*.yaml"):        # the copies point at ./catalogs
        f.write_text(f.read_text().replace("../catalogs/", "catalogs/"))
    src = tmp_path / "debug-then-train.yaml"
    before = src.read_text()
    args = ("--gpu", "A100-80G", "--tokens-per-sec-per-gpu", 3000, "--problem", src, "--job", "train-7b")
    res = run(*args, "--write-problem", src)
    assert res.exit_code == 0, res.output
    out = tmp_path / "debug-then-train.calibrated.yaml"
    assert src.read_text() == before                                  # the problem itself untouched
    new = out.read_text().splitlines()
    assert len(new) == len(before.splitlines()) + 2                   # mfu and mfu_measured added, comments kept
    assert [ln for ln in new if "mfu" not in ln] == before.splitlines()
    prob, _ = load_problem(out)
    jobs = {j.name: j for j in prob.jobs}
    assert jobs["train-7b"].mfu == pytest.approx(0.404, abs=0.001) and jobs["debug-7b"].mfu is None
    again = run(*args, "--write-problem", src)
    assert again.exit_code == 2 and "already exists" in again.output
    # an existing `mfu:` line is replaced in place (seed-13b-100b states 0.60)
    seed = tmp_path / "seed-13b-100b.yaml"
    res = run("--gpu", "A100-80G", "--tokens-per-sec-per-gpu", 2000, "--problem", seed, "--job", "pretrain-13b",
              "--write-problem", seed, "--in-place", "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["assumed_mfu"] == 0.60 and "job pretrain-13b" in data["assumed_from"]
    text = seed.read_text()
    assert text.count("mfu:") == 1 and "mfu: 0.60" not in text
    assert yaml.safe_load(text)["jobs"][0]["mfu"] == pytest.approx(round(data["mfu"], 3))


def test_set_job_mfu_block_styles():
    text = "name: p\njobs:\n- kind: lora   # first\n  name: 'b'\n  tokens: 1e9\n- name: a\n  mfu: 0.3  # old\n"
    out = cal.set_job_mfu(text, "b", 0.5)
    assert out.splitlines()[4] == "  mfu: 0.500" and out.count("\n") == text.count("\n") + 1
    assert cal.set_job_mfu(text, "a", 0.45).splitlines()[-1] == "  mfu: 0.450"
    with pytest.raises(ValueError):
        cal.set_job_mfu(text, "missing", 0.5)
    with pytest.raises(ValueError):
        cal.set_job_mfu("jobs:\n  - {name: a, tokens: 1}\n", "a", 0.5)


def test_write_gpu_row_and_new_catalog(tmp_path):
    res = run("--gpu", "A100-80G", "--catalog", CATALOG, "--tokens-per-sec-per-gpu", 3120, "--params", 7e9,
              "--write-gpu")
    assert res.exit_code == 0, res.output
    assert "- A100-80G," in res.output and "+ A100-80G," in res.output and ",0.420," in res.output
    out = tmp_path / "calibrated"
    res = run("--gpu", "A100-80G", "--catalog", CATALOG, "--tokens-per-sec-per-gpu", 3120, "--params", 7e9,
              "--catalog-out", out)
    assert res.exit_code == 0, res.output
    assert load_catalog(out).gpus["A100-80G"].default_mfu == pytest.approx(0.42)
    assert load_catalog(CATALOG).gpus["A100-80G"].default_mfu == 0.40
    changed = [a for a, b in zip((CATALOG / "gpus.csv").read_text().splitlines(),
                                 (out / "gpus.csv").read_text().splitlines()) if a != b]
    assert len(changed) == 1
    res = run("--gpu", "A100-80G", "--catalog", CATALOG, "--tokens-per-sec-per-gpu", 3120, "--params", 7e9,
              "--catalog-out", out)
    assert res.exit_code == 2 and "already exists" in res.output


def test_written_files_are_checked_as_every_output_file(tmp_path):
    """--write-problem and --catalog-out go through files.check_new_file: --in-place replaces the
    problem but not through a link (without --force), and an existing catalog folder's gpus.csv
    is not replaced through a link either."""
    shutil.copytree(CATALOG, tmp_path / "catalogs" / "beijing-sample")
    real = tmp_path / "real.yaml"
    real.write_text((ROOT / "problems" / "seed-13b-100b.yaml").read_text().replace("../catalogs/", "catalogs/"))
    link = tmp_path / "seed.yaml"
    link.symlink_to(real)
    before = real.read_text()
    args = ("--gpu", "A100-80G", "--tokens-per-sec-per-gpu", 2000, "--problem", link, "--job", "pretrain-13b")
    res = run(*args, "--write-problem", link, "--in-place")
    assert res.exit_code == 2 and "symbolic link" in res.output and real.read_text() == before
    res = run(*args, "--write-problem", link, "--in-place", "--force")
    assert res.exit_code == 0, res.output
    assert not link.is_symlink() and "mfu:" in link.read_text() and real.read_text() == before
    out = tmp_path / "out"
    out.mkdir()
    (out / "gpus.csv").symlink_to(tmp_path / "theirs.csv")
    res = run("--gpu", "A100-80G", "--catalog", CATALOG, "--tokens-per-sec-per-gpu", 3120, "--params", 7e9,
              "--catalog-out", out)
    assert res.exit_code == 2 and "symbolic link" in res.output and not (tmp_path / "theirs.csv").exists()
