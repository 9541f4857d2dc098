"""Memory per GPU and the smallest layout that fits (seeds 000, 002, 003; ZeRO, Korthikanti)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.estimate.memory import (
    NF4_BYTES_PER_PARAM,
    OVERHEAD_GB,
    USABLE_FRACTION,
    Layout,
    ModelShape,
    kv_cache_bytes,
    lora_adapter_params,
    memory_per_gpu,
    minimal_layout,
    smallest_layout,
    seed_rule_of_thumb_gb,
    usable_memory_gb,
)

LLAMA_7B = ModelShape(params=7e9, layers=32, hidden=4096, heads=32, seq_len=4096)
LLAMA_13B = ModelShape(params=13e9, layers=40, hidden=5120, heads=40, seq_len=4096)
LLAMA_30B = ModelShape(params=30e9, layers=60, hidden=6656, heads=52, seq_len=2048)
LLAMA_65B_QLORA = ModelShape(params=65e9, layers=80, hidden=8192, heads=64, seq_len=512)
LLAMA_70B = ModelShape(params=70e9, layers=80, hidden=8192, heads=64, seq_len=4096)


def states_gb(m):
    return m.weights_gb + m.gradients_gb + m.optimizer_gb


# --- Model states (ZeRO §3, §5.1) ----------------------------------------------------

def test_mixed_precision_adam_is_16_bytes_per_param_without_zero():
    m = memory_per_gpu(LLAMA_7B, "pretrain")
    assert (m.weights_gb, m.gradients_gb, m.optimizer_gb) == pytest.approx((14.0, 14.0, 84.0))
    assert states_gb(m) == pytest.approx(16 * 7e9 / 1e9)


def test_zero3_shards_all_states_over_dp():
    m = memory_per_gpu(LLAMA_7B, "full_finetune", dp=8, zero=3)
    assert states_gb(m) == pytest.approx(16 * 7e9 / 8 / 1e9)


@pytest.mark.parametrize(
    ("zero", "expected"),
    [(0, (14.0, 14.0, 84.0)), (1, (14.0, 14.0, 10.5)), (2, (14.0, 1.75, 10.5)), (3, (1.75, 1.75, 10.5))],
)
def test_each_zero_stage_shards_one_more_state(zero, expected):
    m = memory_per_gpu(LLAMA_7B, "pretrain", dp=8, zero=zero)
    assert (m.weights_gb, m.gradients_gb, m.optimizer_gb) == pytest.approx(expected)


def test_tensor_and_pipeline_split_the_states():
    m = memory_per_gpu(LLAMA_7B, "pretrain", tp=2, pp=4)
    assert states_gb(m) == pytest.approx(112.0 / 8)


def test_total_is_the_sum_of_the_parts():
    m = memory_per_gpu(LLAMA_13B, "lora", tp=2, recompute=True)
    parts = states_gb(m) + m.activations_gb + m.overhead_gb
    assert m.total_gb == pytest.approx(parts)
    assert m.overhead_gb == OVERHEAD_GB


# --- Activations (Korthikanti et al. 2022) -------------------------------------------

def test_activations_are_34_sbh_per_layer_plus_logits():
    s, b, h, L, v = 4096, 1, 4096, 32, 32000
    expected = (34 * s * b * h * L + 4 * s * b * v) / 1e9
    assert memory_per_gpu(LLAMA_7B, "pretrain").activations_gb == pytest.approx(expected)
    assert expected == pytest.approx(18.78, abs=0.01)


def test_tensor_parallel_with_sequence_parallel_divides_activations():
    one = memory_per_gpu(LLAMA_7B, "pretrain").activations_gb
    assert memory_per_gpu(LLAMA_7B, "pretrain", tp=4).activations_gb == pytest.approx(one / 4)


def test_pipeline_first_stage_still_holds_all_layers_of_activations():
    one = memory_per_gpu(LLAMA_7B, "pretrain").activations_gb
    assert memory_per_gpu(LLAMA_7B, "pretrain", pp=4).activations_gb == pytest.approx(one)


def test_full_recompute_keeps_layer_inputs_plus_one_live_layer():
    s, h, L, v = 4096, 4096, 32, 32000
    expected = (2 * s * h * L + 34 * s * h + 4 * s * v) / 1e9
    m = memory_per_gpu(LLAMA_7B, "pretrain", recompute=True)
    assert m.activations_gb == pytest.approx(expected)


def test_activations_scale_with_micro_batch():
    one = memory_per_gpu(LLAMA_7B, "pretrain").activations_gb
    assert memory_per_gpu(LLAMA_7B, "pretrain", micro_batch=4).activations_gb == pytest.approx(4 * one)


# --- LoRA, QLoRA, inference -----------------------------------------------------------

def test_lora_adapters_are_2_r_h_on_four_matrices_per_layer():
    assert lora_adapter_params(LLAMA_7B, 16) == 2 * 16 * 4096 * 4 * 32  # 16.8M


def test_lora_keeps_frozen_bf16_weights_and_adapter_states():
    m = memory_per_gpu(LLAMA_7B, "lora", lora_rank=16)
    adapters = lora_adapter_params(LLAMA_7B, 16)
    assert m.weights_gb == pytest.approx((2 * 7e9 + 2 * adapters) / 1e9)
    assert m.gradients_gb == pytest.approx(2 * adapters / 1e9)
    assert m.optimizer_gb == pytest.approx(12 * adapters / 1e9)


def test_qlora_nf4_with_double_quantisation_is_0_516_bytes_per_param():
    # QLoRA §3: 4 bits + 0.127 bits of quantisation constants.
    assert NF4_BYTES_PER_PARAM == pytest.approx(0.515875)
    m = memory_per_gpu(LLAMA_65B_QLORA, "qlora", recompute=True)
    frozen = m.weights_gb - 2 * lora_adapter_params(LLAMA_65B_QLORA, 16) / 1e9
    assert frozen == pytest.approx(33.53, abs=0.01)


def test_qlora_65b_fits_a_single_48gb_card():
    # Dettmers et al. 2023: 65B fine-tuning on one 48 GB GPU (with gradient checkpointing).
    layout = minimal_layout(LLAMA_65B_QLORA, "qlora", 48, max_gpus=1)
    assert layout is not None
    assert layout.gpus == 1 and layout.recompute
    assert layout.memory_per_gpu_gb <= usable_memory_gb(48)


def test_qlora_65b_without_recompute_does_not_fit_48gb():
    m = memory_per_gpu(LLAMA_65B_QLORA, "qlora")
    assert m.total_gb > usable_memory_gb(48)


def test_kv_cache_matches_vllm_paper_800kb_per_token_for_opt_13b():
    # Kwon et al. 2023 (vLLM) §3: 2 × 5120 × 40 × 2 bytes = 800 KB per token.
    opt_13b = ModelShape(params=13e9, layers=40, hidden=5120, heads=40, seq_len=1)
    assert kv_cache_bytes(opt_13b, micro_batch=1) == 819_200


def test_inference_is_bf16_weights_plus_kv_cache():
    m = memory_per_gpu(LLAMA_7B, "inference", micro_batch=2)
    assert m.weights_gb == pytest.approx(14.0)
    assert m.gradients_gb == 0 and m.optimizer_gb == 0
    assert m.activations_gb == pytest.approx(2 * 2 * 32 * 4096 * 4096 * 2 / 1e9)


def test_inference_kv_cache_splits_over_tensor_and_pipeline_stages():
    whole = kv_cache_bytes(LLAMA_70B, micro_batch=4)
    assert kv_cache_bytes(LLAMA_70B, micro_batch=4, tp=2, pp=4) == pytest.approx(whole / 8)
    m = memory_per_gpu(LLAMA_70B, "inference", micro_batch=4, tp=2, pp=4)
    assert m.activations_gb == pytest.approx(whole / 8 / 1e9)


def test_inference_layout_uses_no_zero_and_no_recompute():
    layout = minimal_layout(LLAMA_70B, "inference", 80)
    assert layout is not None
    assert layout.zero == 0 and not layout.recompute and layout.dp == 1


@pytest.mark.parametrize("kwargs", [{"zero": 3, "dp": 2}, {"zero": 4}, {"tp": 0}, {"pp": 64}])
def test_memory_rejects_impossible_layouts(kwargs):
    kind = "inference" if kwargs.get("zero") == 3 else "pretrain"
    with pytest.raises(ValueError):
        memory_per_gpu(LLAMA_7B, kind, **kwargs)


@pytest.mark.parametrize("kind", ["preprocess", "distill"])
def test_no_memory_model_for_preprocess_or_unknown_kinds(kind):
    with pytest.raises(ValueError):
        memory_per_gpu(LLAMA_7B, kind)
    with pytest.raises(ValueError):
        minimal_layout(LLAMA_7B, kind, 80)


# --- Scenarios from the seeds ---------------------------------------------------------

def test_7b_full_finetune_fits_one_8x_a100_80g_node():
    layout = minimal_layout(LLAMA_7B, "full_finetune", 80, max_gpus=8)
    assert layout == Layout(2, 2, 1, 1, 0, False, pytest.approx(66.89, abs=0.01), False)
    assert layout.describe() == "TP2×PP1×DP1"


def test_13b_full_finetune_fits_one_node_although_seed003_says_two():
    # Seed 003's "120 GB+, two 8-card machines" is a rough rule; states are 208 GB.
    layout = minimal_layout(LLAMA_13B, "full_finetune", 80, max_gpus=8)
    assert layout is not None and not layout.multi_node


def test_seed003_scenario_a_30b_does_not_fit_8x_rtx4090():
    assert minimal_layout(LLAMA_30B, "full_finetune", 24, max_gpus=8) is None


def test_30b_on_4090s_needs_a_multi_node_group():
    layout = minimal_layout(LLAMA_30B, "full_finetune", 24)
    assert layout is not None and layout.multi_node and layout.gpus > 8


def test_70b_full_training_does_not_fit_one_8x_a100_node_without_offload():
    # Seed 002 says "works but tight with ZeRO-3": only true with CPU offload.
    assert minimal_layout(LLAMA_70B, "pretrain", 80, max_gpus=8) is None
    zero3 = memory_per_gpu(LLAMA_70B, "pretrain", dp=8, zero=3, recompute=True)
    assert zero3.total_gb > 80


def test_prefers_recompute_inside_a_node_over_a_multi_node_group():
    shape = ModelShape(params=30e9, layers=60, hidden=6656, heads=52, seq_len=4096)
    layout = minimal_layout(shape, "pretrain", 80)
    assert layout is not None and not layout.multi_node and layout.recompute


def test_prefers_no_recompute_over_fewer_gpus_when_both_in_node():
    # 1B model, seq 4096 on a 24 GB card: one GPU fits only with recompute (+33 % FLOPs).
    shape = ModelShape(params=1e9, layers=24, hidden=2048, heads=16, seq_len=4096)
    single = minimal_layout(shape, "pretrain", 24, max_gpus=1)
    assert single is not None and single.recompute
    layout = minimal_layout(shape, "pretrain", 24)
    assert layout is not None and not layout.recompute and layout.gpus == 2


def test_tensor_parallel_stays_inside_a_node():
    # 4-GPU nodes: TP8 would cross the node boundary, so the 7B job uses TP≤4.
    layout = minimal_layout(LLAMA_7B, "full_finetune", 24, gpus_per_node=4)
    assert layout is not None and layout.tp <= 4
    assert minimal_layout(LLAMA_7B, "full_finetune", 24, gpus_per_node=8).tp == 8


def test_describe_lists_zero_and_recompute():
    layout = Layout(8, 2, 1, 4, 3, True, 70.0, False)
    assert layout.describe() == "TP2×PP1×DP4, ZeRO-3, recompute"


def test_label_counts_replicas_and_the_whole_data_parallel_degree():
    assert Layout(2, 2, 1, 1, 0, False, 66.9, False).label(20) == "20 replicas of TP2×PP1 (DP20)"
    assert Layout(1, 1, 1, 1, 0, True, 37.0, False).label(1) == "1 replica of TP1×PP1 (DP1), recompute"
    sharded = Layout(8, 2, 1, 4, 3, True, 70.0, False)
    assert sharded.label(5) == "5 replicas of TP2×PP1 sharded over 4 (DP20), ZeRO-3, recompute"


def test_smallest_layout_allows_recompute_where_the_fastest_does_not():
    # The same 1B case: the fastest group takes 2 GPUs without recompute, the smallest 1 with it.
    shape = ModelShape(params=1e9, layers=24, hidden=2048, heads=16, seq_len=4096)
    assert minimal_layout(shape, "pretrain", 24).gpus == 2
    small = smallest_layout(shape, "pretrain", 24)
    assert small is not None and small.gpus == 1 and small.recompute
    # where one GPU holds it without recompute, the smallest does not add recompute
    assert smallest_layout(LLAMA_7B, "lora", 80) == minimal_layout(LLAMA_7B, "lora", 80)


def test_smallest_layout_never_has_more_gpus_than_the_fastest():
    for shape in (LLAMA_7B, LLAMA_13B, LLAMA_30B, LLAMA_70B):
        for kind in ("pretrain", "lora", "qlora", "inference"):
            for memory in (24, 48, 80):
                fast, small = minimal_layout(shape, kind, memory), smallest_layout(shape, kind, memory)
                assert (fast is None) == (small is None)
                if fast is not None:
                    assert small.gpus <= fast.gpus and small.memory_per_gpu_gb <= usable_memory_gb(memory)


def test_seed000_rule_of_thumb_gives_28gb_for_7b_fp16():
    # Seed 000 quotes "about 32 GB"; the real Adam accounting is 112 GB of states.
    assert seed_rule_of_thumb_gb(7e9) == pytest.approx(28.0)


def test_usable_memory_keeps_a_fragmentation_margin():
    assert usable_memory_gb(80) == pytest.approx(80 * USABLE_FRACTION) == pytest.approx(73.6)


# --- Laws -----------------------------------------------------------------------------

@st.composite
def shapes(draw):
    heads = draw(st.sampled_from([8, 16, 32, 40, 52, 64, 96]))
    hidden = heads * draw(st.sampled_from([64, 128]))
    layers = draw(st.integers(2, 96))
    params = 12 * layers * hidden**2 * draw(st.floats(1.0, 1.2))
    seq = draw(st.sampled_from([512, 1024, 2048, 4096, 8192]))
    return ModelShape(params=params, layers=layers, hidden=hidden, heads=heads, seq_len=seq)


training = st.sampled_from(["pretrain", "full_finetune", "sweep", "lora", "qlora"])
pow2 = st.sampled_from([1, 2, 4, 8, 16, 32])


@given(shapes(), training, st.integers(1, 3), pow2, st.booleans())
def test_memory_never_grows_with_dp_under_zero(shape, kind, zero, dp, rec):
    small = memory_per_gpu(shape, kind, dp=dp, zero=zero, recompute=rec).total_gb
    large = memory_per_gpu(shape, kind, dp=2 * dp, zero=zero, recompute=rec).total_gb
    assert large <= small


@given(shapes(), training, st.integers(0, 2), pow2, st.booleans())
def test_memory_never_grows_with_zero_stage(shape, kind, zero, dp, rec):
    low = memory_per_gpu(shape, kind, dp=dp, zero=zero, recompute=rec).total_gb
    high = memory_per_gpu(shape, kind, dp=dp, zero=zero + 1, recompute=rec).total_gb
    assert high <= low


@given(shapes(), st.sampled_from(["pretrain", "lora", "qlora", "inference"]), pow2, st.booleans())
def test_memory_never_grows_with_tp(shape, kind, tp, rec):
    assert memory_per_gpu(shape, kind, tp=2 * tp, recompute=rec).total_gb <= (
        memory_per_gpu(shape, kind, tp=tp, recompute=rec).total_gb
    )


@given(shapes(), st.sampled_from(["pretrain", "lora", "qlora", "inference"]), pow2)
def test_memory_never_grows_with_pp(shape, kind, pp):
    if 2 * pp <= shape.layers:
        assert memory_per_gpu(shape, kind, pp=2 * pp).total_gb <= memory_per_gpu(shape, kind, pp=pp).total_gb


@given(shapes(), training, pow2)
def test_recompute_never_costs_memory(shape, kind, tp):
    assert memory_per_gpu(shape, kind, tp=tp, recompute=True).total_gb <= (
        memory_per_gpu(shape, kind, tp=tp).total_gb
    )


@given(shapes())
def test_qlora_below_lora_below_full_training(shape):
    q, l, f = (memory_per_gpu(shape, k).total_gb for k in ("qlora", "lora", "full_finetune"))
    assert q < l < f


@settings(max_examples=40, deadline=None)
@given(shapes(), training, st.sampled_from([16, 24, 40, 48, 80, 96, 141]))
def test_minimal_layout_fits_and_is_consistent(shape, kind, mem):
    layout = minimal_layout(shape, kind, mem, max_gpus=256)
    if layout is None:
        return
    assert layout.gpus == layout.tp * layout.pp * layout.dp <= 256
    assert layout.memory_per_gpu_gb <= usable_memory_gb(mem)
    assert layout.multi_node == (layout.gpus > 8)
    assert layout.tp <= 8 and shape.heads % layout.tp == 0
    again = memory_per_gpu(shape, kind, tp=layout.tp, pp=layout.pp, dp=layout.dp,
                           zero=layout.zero, recompute=layout.recompute)
    assert again.total_gb == pytest.approx(layout.memory_per_gpu_gb)


@settings(max_examples=40, deadline=None)
@given(shapes(), training, st.sampled_from([16, 24, 40, 48, 80]))
def test_more_memory_per_card_never_gives_a_worse_layout(shape, kind, mem):
    def rank(layout):
        return (2, 0, 0) if layout is None else (layout.multi_node, layout.recompute, layout.gpus)

    small = minimal_layout(shape, kind, mem, max_gpus=256)
    large = minimal_layout(shape, kind, mem * 1.5, max_gpus=256)
    assert rank(large) <= rank(small)
