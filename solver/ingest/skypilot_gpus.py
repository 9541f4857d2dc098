"""Which gpus.csv row a SkyPilot price-list row rents: GPU identity from everything the row says.

SkyPilot names accelerators loosely: one name covers cards of different memory and form ("A100" is
40 or 80 GB, "H100" is SXM, PCIe or NVL depending on the cloud and instance type). A plan on the
wrong row uses the wrong memory, speed and in-node fabric, so identity is read from every clue:

  1. AcceleratorName → the variants that name may mean (VARIANTS);
  2. memory per GPU from GpuInfo (MemoryInfo.SizeInMiB; on vast it is the node's total);
  3. the form: in the name (H100-SXM, H100-NVL), in the instance type's words (sxm4, pcie, pci, nvl),
     or a per-cloud rule where the cloud's naming says it (CLOUD_NAME_FORMS, INSTANCE_FORMS);
  4. GCP machine types that carry their GPUs in the name (a2-highgpu-8g, a3-megagpu-8g, …: GCP_FAMILIES).

Among the variants left, none is an unknown card and two or more an ambiguous one: both are reported,
never guessed. The first variant of a name is SkyPilot's own meaning of it (SkyPilot's "A100" is the
40 GB SXM card, "H100" the SXM one) and is taken when no clue speaks against it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Variant:
    """One card a SkyPilot accelerator name may mean: its gpus.csv id, memory per GPU and form."""

    gpu: str
    memory_gib: float
    form: str          # sxm | pcie | nvl (an H100 NVL: PCIe cards paired by a bridge, 94 GB)


def _v(gpu: str, memory: float, form: str = "sxm") -> Variant:
    return Variant(gpu, memory, form)


VARIANTS: dict[str, tuple[Variant, ...]] = {
    "A100": (_v("A100-40G", 40), _v("A100-80G", 80), _v("A100-80G-PCIe", 80, "pcie")),
    "A100-80GB": (_v("A100-80G", 80), _v("A100-80G-PCIe", 80, "pcie")),
    "A100-80GB-SXM": (_v("A100-80G", 80),),
    "A800": (_v("A800-80G", 80), _v("A800-80G-PCIe", 80, "pcie")),
    "H100": (_v("H100-80G", 80), _v("H100-PCIe-80G", 80, "pcie"), _v("H100-NVL-94G", 94, "nvl")),
    "H100-SXM": (_v("H100-80G", 80),),
    "H100-MEGA": (_v("H100-80G", 80),),
    "H100-NVL": (_v("H100-NVL-94G", 94, "nvl"),),
    "H200": (_v("H200-141G", 141),), "H200-SXM": (_v("H200-141G", 141),),
    "B200": (_v("B200-180G", 180),), "GH200": (_v("GH200-96G", 96),),
    "L40S": (_v("L40S-48G", 48, "pcie"),), "L40": (_v("L40-48G", 48, "pcie"),),
    "L4": (_v("L4-24G", 24, "pcie"),), "A10G": (_v("A10G-24G", 24, "pcie"),), "A10": (_v("A10-24G", 24, "pcie"),),
    "A40": (_v("A40-48G", 48, "pcie"),),
    "A6000": (_v("A6000-48G", 48, "pcie"),), "RTXA6000": (_v("A6000-48G", 48, "pcie"),),
    "RTX6000": (_v("RTX6000-24G", 24, "pcie"),), "RTX4090": (_v("RTX4090-24G", 24, "pcie"),),
    "RTX3090": (_v("RTX3090-24G", 24, "pcie"),),
    "V100": (_v("V100-16G", 16), _v("V100-32G", 32)), "V100-32GB": (_v("V100-32G", 32),),
    "T4": (_v("T4-16G", 16, "pcie"),), "P100": (_v("P100-16G", 16),),
}
"""SkyPilot AcceleratorName → the cards it may mean, SkyPilot's own meaning first."""

ACCELERATORS: dict[str, str] = {name: variants[0].gpu for name, variants in VARIANTS.items()}
"""SkyPilot AcceleratorName → the gpus.csv row it means when nothing else is known."""

CLOUD_NAME_FORMS: dict[str, dict[str, str]] = {
    "runpod": {"H100": "pcie", "A100-80GB": "pcie"},
}
"""Per cloud, names whose form the cloud's own naming fixes: runpod lists its SXM cards apart
(H100-SXM, A100-80GB-SXM, H100-NVL), so its plain "H100" and "A100-80GB" are the PCIe cards."""

INSTANCE_FORMS: tuple[tuple[str, str, str], ...] = (
    ("azure", r"^Standard_NC\d+ads_A100_v4$", "pcie"),      # NC A100 v4: A100 80 GB PCIe
    ("azure", r"^Standard_NC\d+ad[i]?s_H100_v5$", "nvl"),    # NCads H100 v5: H100 NVL 94 GB
)
"""(cloud, instance-type pattern, form) where the instance family fixes the form (Azure's series docs)."""

GCP_FAMILIES: tuple[tuple[str, str, int | None], ...] = (
    (r"^a2-highgpu-(\d+)g$", "A100", None), (r"^a2-megagpu-(\d+)g$", "A100", None),
    (r"^a2-ultragpu-(\d+)g(-nolssd)?$", "A100-80GB", None),
    (r"^a3-highgpu-(\d+)g$", "H100", None), (r"^a3-edgegpu-(\d+)g(-nolssd)?$", "H100", None),
    (r"^a3-megagpu-(\d+)g$", "H100-MEGA", None), (r"^a3-ultragpu-(\d+)g(-nolssd)?$", "H200", None),
    (r"^a4-highgpu-(\d+)g$", "B200", None),
    (r"^g2-standard-(4|8|12|16|32)$", "L4", 1), (r"^g2-standard-24$", "L4", 2),
    (r"^g2-standard-48$", "L4", 4), (r"^g2-standard-96$", "L4", 8),
)
"""GCP machine types that come with their GPUs: pattern → (accelerator, GPUs per machine; None: the
number before "g"). The machine type's Price covers the host only; the GPUs are priced on the
accelerator rows (empty InstanceType) of the same name, count, region and zone."""

ATTACHABLE = {"T4", "V100", "P100", "P4"}
"""GCP accelerators attached to an N1 host VM (their rows carry no host)."""

NOT_GPUS = re.compile(r"^tpu", re.IGNORECASE)
GPU_WORDS = re.compile(r"(?<![a-z0-9])(a100|a10g?|a40|a800|h100|h200|h800|b200|gh200|l40s?|l4|t4|v100|p100|k80|"
                       r"a6000|rtx\w*|mi\d+\w*)(?![a-z0-9])")
"""Words of an instance type that name a GPU: such a row is not CPU-only even with no AcceleratorName."""

MEMORY_IS_TOTAL = {"vast"}
"""Clouds whose GpuInfo MemoryInfo is the node's total, not one GPU's (vast: 2x H100 → 163,118 MiB)."""
MEMORY_IS_HOST = {"nebius"}
"""Clouds whose GpuInfo MemoryInfo is the VM's RAM per GPU, not GPU memory (nebius: 1gpu-16vcpu-200gb
→ 204,800 MiB): ignored there."""
MEMORY_TOLERANCE = 0.08


@dataclass(frozen=True)
class Identity:
    """What a row rents: the gpus.csv id (None: unknown or ambiguous, `why` says which) and the clues."""

    gpu: str | None
    why: str = ""
    memory_gib: float | None = None
    form: str | None = None


def gcp_family(instance_type: str) -> tuple[str, int] | None:
    """The GPUs a GCP machine type comes with (accelerator name, count), or None."""
    for pattern, accel, fixed in GCP_FAMILIES:
        hit = re.match(pattern, instance_type)
        if hit:
            return accel, fixed if fixed is not None else int(hit.group(1))
    return None


def names_gpu(instance_type: str) -> str | None:
    """A word of the instance type that names a GPU (Standard_NC16ads_A10_v4 → 'a10'), or None."""
    hit = GPU_WORDS.search(re.sub(r"[^a-z0-9]+", " ", instance_type.lower()))
    return hit.group(1) if hit else None


def memory_per_gpu(cloud: str, gpu_info: str, count: int) -> float | None:
    """GiB per GPU from GpuInfo (a Python-literal dict), or None when it says none."""
    if cloud in MEMORY_IS_HOST:
        return None
    try:
        data = ast.literal_eval(gpu_info) if gpu_info.strip().startswith("{") else None
        mib = float(data["Gpus"][0]["MemoryInfo"]["SizeInMiB"]) if data else None
    except (ValueError, SyntaxError, KeyError, IndexError, TypeError, MemoryError):
        return None
    if not mib or mib <= 0:
        return None
    return mib / 1024 / (count if cloud in MEMORY_IS_TOTAL and count > 0 else 1)


def form_hint(cloud: str, instance_type: str, accel: str) -> str | None:
    """The form the row's naming says: the accelerator name, the instance type's words, a cloud rule."""
    for cloud_rule, pattern, form in INSTANCE_FORMS:
        if cloud == cloud_rule and re.match(pattern, instance_type):
            return form
    words = set(re.split(r"[^a-z0-9]+", f"{accel} {instance_type}".lower()))
    if "nvl" in words:
        return "nvl"
    if any(w.startswith("sxm") for w in words):
        return "sxm"
    if words & {"pcie", "pci"}:
        return "pcie"
    return CLOUD_NAME_FORMS.get(cloud, {}).get(accel)


def identify(cloud: str, instance_type: str, accel: str, count: int, gpu_info: str) -> Identity:
    """The gpus.csv row a row rents, from its name, memory per GPU and form (module docstring)."""
    variants = VARIANTS.get(accel)
    memory = memory_per_gpu(cloud, gpu_info, count)
    form = form_hint(cloud, instance_type, accel)
    if variants is None:
        return Identity(None, "not in the mapping table", memory, form)
    left = [v for v in variants if (form is None or v.form == form)
            and (memory is None or abs(v.memory_gib - memory) <= MEMORY_TOLERANCE * v.memory_gib)]
    if len(left) == 1 or (left and left[0] == variants[0]):
        return Identity(left[0].gpu, "", memory, form)
    clues = ", ".join(c for c in (f"{memory:.0f} GiB per GPU" if memory else "", f"form {form}" if form else "") if c)
    known = ", ".join(f"{v.gpu} ({v.memory_gib:g} GB {v.form})" for v in variants)
    if not left:
        return Identity(None, f"no card of that name fits {clues} (known: {known})", memory, form)
    return Identity(None, f"ambiguous: {clues or 'no memory or form given'} fits "
                          f"{' and '.join(v.gpu for v in left)}", memory, form)
