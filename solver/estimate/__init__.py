"""Physics of a training job: FLOPs, memory per GPU, sustained throughput.

Pure functions, no I/O; each formula cites its source in its docstring.
"""

from solver.estimate.flops import (
    KINDS,
    card_hours,
    flops_factor,
    min_gpus_for_deadline,
    nodes_for_gpus,
    training_flops,
)
from solver.estimate.memory import (
    USABLE_FRACTION,
    Layout,
    MemoryBreakdown,
    ModelShape,
    kv_cache_bytes,
    lora_adapter_params,
    memory_per_gpu,
    minimal_layout,
    smallest_layout,
    seed_rule_of_thumb_gb,
    usable_memory_gb,
)
from solver.estimate.throughput import (
    INTERCONNECTS,
    SCALE_TIERS,
    effective_tflops,
    fabric_factor,
    peak_tflops,
    scale_factor,
    scale_tiers,
    spot_loss,
)

__all__ = [
    "INTERCONNECTS",
    "KINDS",
    "SCALE_TIERS",
    "USABLE_FRACTION",
    "Layout",
    "MemoryBreakdown",
    "ModelShape",
    "card_hours",
    "effective_tflops",
    "fabric_factor",
    "flops_factor",
    "kv_cache_bytes",
    "lora_adapter_params",
    "memory_per_gpu",
    "min_gpus_for_deadline",
    "minimal_layout",
    "smallest_layout",
    "nodes_for_gpus",
    "peak_tflops",
    "scale_factor",
    "scale_tiers",
    "seed_rule_of_thumb_gb",
    "spot_loss",
    "training_flops",
    "usable_memory_gb",
]
