"""Comparison groups: the kernels that compute the same thing, compared only within one run.

A :class:`Group` names its members (ours, baselines, peers), the **reference** member every
speedup is measured against (``speedup = t_reference / t_member``, > 1: the member is
faster), and the shapes, as shape keys whose dtype is the group's. A member may run at another
dtype (an fp8 kernel beside bf16 ones) and with its own tolerance; each member is checked
against its plan's reference at its own dtype. Members are timed with a cold L2 unless one says
``l2="warm"`` (the same kernel twice, cold and warm, measures what L2 residency is worth).

``python -m mla_var3.evidence verify`` verifies every declared group at every shape: it checks
each member in its own subprocess, then times all members in one process, interleaved in
rounds (:mod:`mla_var3.evidence.group_run`). Records go to
``evidence/groups/<group>/<config>/<device>.json``; pages cite them as
``evidence: [{group: <group>, config: <config>}]`` and through ``speedup()`` and ``compare()``.

To add a group, append it to :data:`GROUPS`; ``tests/test_groups.py`` checks every declaration.
"""

from __future__ import annotations

from dataclasses import dataclass

from mla_var3.evidence.model import NAME, EvidenceError, parse_shape_key, shape_key
from mla_var3.kernel.bench import COLD_L2, L2_MODES
from mla_var3.kernel.workloads.mla import mla_shape

GEMM_SHAPES = ("m8192-n8192-k8192", "m4096-n4096-k4096", "m8000-n8008-k8200", "m1024-n1024-k1024")
MLA_DECODE_MEMBERS = (
    "flashmla_decode", "mla_decode_v0", "mla_decode_v1", "mla_decode_v2", "mla_decode_v3", "mla_decode_v4", "mla_decode_cutile",
)  # fmt: skip
MLA_SCHEDULE_MEMBERS = ("flashmla_decode", "mla_decode_v4", "mla_decode_v5")  # v5 and the kernel it changes
FMHA_HOPPER_MEMBERS = ("fmha_hopper_v0", "fmha_hopper_v1", "fmha_hopper_v2", "fmha_hopper_v3")


@dataclass(frozen=True)
class Member:
    """A kernel in a group; ``name`` (default: the kernel) is how tables and ``speedup()`` call it."""

    kernel: str
    name: str = ""
    dtype: str | None = None  # default: the dtype of the group's shape key
    tolerance: float | None = None  # default: the plan's tolerance for its dtype
    l2: str = COLD_L2  # "warm": timed on one input set kept in L2 (mla_var3.kernel.bench.WARM_L2)

    def __post_init__(self) -> None:
        if self.l2 not in L2_MODES:
            raise EvidenceError(f"member {self.id!r}: l2 must be one of {', '.join(L2_MODES)}, got {self.l2!r}")

    @property
    def id(self) -> str:
        return self.name or self.kernel


@dataclass(frozen=True)
class Group:
    """Members, the reference member's id, the shape keys, and how many launches each round times."""

    name: str
    description: str
    reference: str
    members: tuple[Member, ...]
    shapes: tuple[str, ...]
    launches_per_round: int = 20
    rounds: int = 20
    max_rounds: int = 60

    def __post_init__(self) -> None:
        ids = [m.id for m in self.members]
        if not NAME.match(self.name):
            raise EvidenceError(f"group {self.name!r}: the name must be snake_case")
        if len(set(ids)) != len(ids) or len(ids) < 2:
            raise EvidenceError(f"group {self.name!r}: needs two or more members with distinct names, got {ids}")
        if self.reference not in ids:
            raise EvidenceError(f"group {self.name!r}: reference {self.reference!r} is not one of its members {ids}")
        for config in self.shapes:
            parse_shape_key(config)
        if not (self.rounds >= 20 and self.max_rounds >= self.rounds and self.launches_per_round >= 1):
            raise EvidenceError(f"group {self.name!r}: needs >= 20 rounds, max_rounds >= rounds, launches >= 1")

    def member(self, member_id: str) -> Member:
        for m in self.members:
            if m.id == member_id:
                return m
        raise EvidenceError(f"group {self.name!r} has no member {member_id!r} (members: {', '.join(m.id for m in self.members)})")

    def member_config(self, member: Member, config: str) -> str:
        """The shape key a member runs at for the group's ``config`` (its own dtype where it has one)."""
        shape, dtype = parse_shape_key(config)
        return shape_key(shape, member.dtype or dtype)


GROUPS: tuple[Group, ...] = (
    Group(
        "gemm_bf16",
        "bf16 GEMM, C = A B: our warp-specialized Hopper kernel against cuBLAS "
        "(CUTLASS's Hopper dense_gemm example rejects bf16)",
        reference="cublas_gemm",
        members=(Member("cublas_gemm"), Member("hopper_gemm_ws")),
        shapes=tuple(f"{s}-bfloat16" for s in GEMM_SHAPES),
    ),
    Group(
        "gemm_fp16",
        "fp16 GEMM, C = A B: our warp-specialized Hopper kernel and CUTLASS's Hopper dense_gemm example against cuBLAS",
        reference="cublas_gemm",
        members=(Member("cublas_gemm"), Member("hopper_gemm_ws"), Member("cutlass_hopper_dense_gemm")),
        shapes=tuple(f"{s}-float16" for s in GEMM_SHAPES),
    ),
    Group(
        "gemm_data_distribution",
        "the same cuBLAS bf16 GEMM on standard-normal data and on the small integers CUTLASS's examples use",
        reference="cublas_gemm",
        members=(Member("cublas_gemm"), Member("cublas_gemm_small_int")),
        shapes=("m8192-n8192-k8192-bfloat16",),
    ),
    # The memory micro-benchmarks (snippets/gpu/, page docs/concepts/memory-microbenchmarks.md).
    Group(
        "copy_vector_width",
        "fp32 copy, dst = src, 256 MiB each way: one kernel with 32-, 64- and 128-bit accesses per thread "
        "(same grid, same bytes per thread) and torch's copy_",
        reference="copy_vec128",
        members=(Member("copy_vec32"), Member("copy_vec64"), Member("copy_vec128"), Member("copy_torch")),
        shapes=("n67108864-float32",),
    ),
    Group(
        "smem_swizzle",
        "fp32 transpose through a 32x32 SMEM tile written by rows and read by columns: row-major tile "
        "(32-way bank conflicts) against the S<5,0,5>-swizzled tile",
        reference="transpose_smem",
        members=(Member("transpose_smem"), Member("transpose_smem_swizzled")),
        shapes=("m8192-n8192-float32",),
    ),
    Group(
        "async_copy_vs_tma",
        "fp32 copy through 64x128 SMEM tiles, one per CTA: loaded with cp.async (LDGSTS) against one TMA "
        "load (UTMALDG), the same store",
        reference="tile_load_cp_async",
        members=(Member("tile_load_cp_async"), Member("tile_load_tma")),
        shapes=("m8192-n8192-float32",),
    ),
    Group(
        "l2_vs_dram",
        "the 128-bit fp32 copy on a 32 MiB working set (16 MiB each way, fits the L2): cold L2 (inputs "
        "rotated, read from DRAM) against warm L2 (one input set, L2-resident)",
        reference="dram",
        members=(Member("copy_vec128", name="dram"), Member("copy_vec128", name="l2", l2="warm")),
        shapes=("n4194304-float32",),
        launches_per_round=100,  # launches of a few microseconds: more per round for a steady median
    ),
    # MLA decode (issue 9): page 64, FlashMLA's one page size. Every member takes every shape of its
    # group; the b = 128 and the small-batch shapes are two groups only for the launch count: 400
    # launches (~5 ms rounds of ~12 us launches) would take ~10 min per shape at s_q = 2, s_k = 32768.
    Group(
        "mla_decode_bf16",
        "bf16 absorbed-MLA decode over a paged KV cache (page 64), b = 128: FlashMLA's SM90 kernel against our "
        "CuTe DSL variants v0-v3 and our cuTile split-KV kernel; compute-bound (h_q = 128, s_q 1 or 2, s_k "
        "4096-32768, fixed and variable lengths) and memory-bound (h_q 16-64) shapes",
        reference="flashmla_decode",
        members=tuple(Member(k) for k in MLA_DECODE_MEMBERS),
        shapes=tuple(
            shape_key(mla_shape(**flags), "bfloat16")
            for flags in (
                {"t": 8192, "h": 128},  # compute-bound
                {"t": 8192, "h": 16},  # memory-bound
                *(
                    {"s": s, "t": t, "h": 128, "varlen": v}
                    for s in (1, 2)
                    for t in (4096, 8192, 16384, 32768)
                    for v in (0, 1)
                    if (s, t, v) != (1, 8192, 0)
                ),
                *({"t": t, "h": h} for h in (16, 32, 64) for t in (4096, 8192) if (h, t) != (16, 8192)),
            )
        ),
        launches_per_round=40,  # the fastest launch (FlashMLA, h_q 16, s_k 4096) ~0.15 ms: rounds >= ~6 ms
    ),
    Group(
        "mla_decode_bf16_latency",
        "bf16 absorbed-MLA decode, the latency shapes (b = 1, 4, 8; h_q = 128, s_q = 1, s_k = 8192, page 64): "
        "the members of mla_decode_bf16, in a group of its own for its launch count (launches of ~10-50 us)",
        reference="flashmla_decode",
        members=tuple(Member(k) for k in MLA_DECODE_MEMBERS),
        shapes=tuple(shape_key(mla_shape(b=b, t=8192, h=128), "bfloat16") for b in (4, 1, 8)),
        launches_per_round=400,  # FlashMLA at b = 1 ~12 us: rounds >= ~5 ms
    ),
    # MLA decode v5 (issue 9): v4's kernel with longest-first dispatch and a wider combine, in groups of
    # its own at the shapes where v4 fell furthest behind (so adding it stales no mla_decode_bf16 record).
    Group(
        "mla_decode_schedule",
        "bf16 absorbed-MLA decode, b = 128, h_q = 128, page 64: FlashMLA against our v4 (sequences in batch "
        "order) and v5 (v4's kernel, longest sequence first): variable and fixed lengths",
        reference="flashmla_decode",
        members=tuple(Member(k) for k in MLA_SCHEDULE_MEMBERS),
        shapes=tuple(
            shape_key(mla_shape(s=s, t=8192, h=128, varlen=v), "bfloat16") for s, v in ((1, 1), (1, 0), (2, 1))
        ),
        launches_per_round=40,
    ),
    Group(
        "mla_decode_schedule_latency",
        "bf16 absorbed-MLA decode at the latency shapes (b = 1, 4; h_q = 128, s_k = 8192): FlashMLA against "
        "v4 (one warp per row in the combine) and v5 (a warp per row and column quarter, loads unrolled)",
        reference="flashmla_decode",
        members=tuple(Member(k) for k in MLA_SCHEDULE_MEMBERS),
        shapes=tuple(shape_key(mla_shape(b=b, t=8192, h=128), "bfloat16") for b in (1, 4)),
        launches_per_round=400,
    ),
    # MLA decode v6/v7 (issue 9): the split path's partial traffic, where v5 is furthest behind FlashMLA.
    Group(
        "mla_decode_split_path",
        "bf16 absorbed-MLA decode at the split shapes (b = 1, 4, 8; h_q = 128, s_k = 8192): FlashMLA against "
        "v5, v6 (v5 + 64-bit stores of the fp32 partials) and v7 (v6 + a combine with its split weights "
        "computed once into SMEM)",
        reference="flashmla_decode",
        members=tuple(Member(k) for k in ("flashmla_decode", "mla_decode_v5", "mla_decode_v6", "mla_decode_v7")),
        shapes=tuple(shape_key(mla_shape(b=b, t=8192, h=128), "bfloat16") for b in (1, 4, 8)),
        launches_per_round=400,
    ),
    Group(
        "mla_decode_cutile_tilegym",
        "bf16 MLA decode in cuTile: TileGym's kernel (non-paged cache gathered outside the timed launch, tiles "
        "retuned to 32 heads x 64 KV rows) against our paged split-KV cuTile kernel, FlashMLA for context; the "
        "shapes TileGym takes (s_q = 1, fixed lengths), b = 128, h_q = 128",
        reference="tilegym_mla_decode",
        members=(Member("tilegym_mla_decode"), Member("mla_decode_cutile"), Member("flashmla_decode")),
        shapes=tuple(shape_key(mla_shape(t=t), "bfloat16") for t in (8192, 4096)),
        launches_per_round=24,  # FlashMLA at s_k 4096 ~0.25 ms: rounds >= ~6 ms
    ),
    # FP8 (issue 11): e4m3 A and B with per-tensor scales, bf16 C. The bf16 members run the same M, N, K
    # at their own dtype and tolerance: what FP8 buys over bf16 in one run. The group's ceilings include
    # the fp8 matmul rate (torch._scaled_mm), each member's roofline uses its own dtype's.
    Group(
        "gemm_fp8",
        "FP8 e4m3 GEMM with per-tensor scales, bf16 out: our Hopper kernel with fp32 promotion every K tile "
        "(2xAcc) and with fast accumulation against cuBLASLt's FP8 GEMM (torch._scaled_mm, promoted); our bf16 "
        "kernel and cuBLAS bf16 at the same M, N, K for the precision trade",
        reference="cublas_gemm_fp8",
        members=(
            Member("cublas_gemm_fp8"),
            Member("hopper_gemm_fp8"),
            Member("hopper_gemm_fp8_fast_accum"),
            Member("hopper_gemm_ws", dtype="bfloat16"),
            Member("cublas_gemm", dtype="bfloat16"),
        ),
        shapes=("m8192-n8192-k8192-float8_e4m3fn", "m4096-n4096-k4096-float8_e4m3fn"),
    ),
    # RMSNorm forward and row reductions (issue 11). The RMSNorm members share one workload (bf16 x,
    # fp32 w, bf16 y) except CUTLASS's example, whose weight is bf16 (its own plan's inputs); the
    # bytes differ by the weight only (N values). Launches of ~0.13-0.5 ms: rounds >= ~5 ms.
    Group(
        "rmsnorm_bf16",
        "RMSNorm forward, bf16 x, fp32 weight, bf16 y: quack 0.6.5 against our v0 (one row per CTA), v1 "
        "(persistent, w in registers), v2 (rows per CTA, cluster/DSMEM above 8192 columns per CTA), CUTLASS's "
        "rmsnorm.py (bf16 weight) and torch.nn.functional.rms_norm",
        reference="quack_rmsnorm",
        members=tuple(
            Member(k)
            for k in ("quack_rmsnorm", "rmsnorm_v0", "rmsnorm_v1", "rmsnorm_v2", "cutlass_rmsnorm", "torch_rmsnorm")
        ),
        shapes=("m32768-n4096-bfloat16", "m32768-n8192-bfloat16", "m16384-n16384-bfloat16"),
        launches_per_round=40,
    ),
    # rmsnorm_v3 beside the peers and its predecessor, in a group of its own (a member added to
    # rmsnorm_bf16 would stale that group's records): x staged in SMEM by bulk copies.
    Group(
        "rmsnorm_bf16_v3",
        "RMSNorm forward, bf16 x, fp32 weight, bf16 y: quack 0.6.5 against our v3 (x staged in an SMEM ring by "
        "cp.async.bulk; its default layout and, as members of their own, two persistent 256-thread CTAs per SM and "
        "one 512-thread CTA per SM), v2 (rows per CTA, cluster/DSMEM above 8192 columns per CTA) and CUTLASS's "
        "rmsnorm.py (bf16 weight)",
        reference="quack_rmsnorm",
        members=tuple(
            Member(k)
            for k in (
                "quack_rmsnorm",
                "rmsnorm_v3",
                "rmsnorm_v3_two_per_sm",
                "rmsnorm_v3_one_per_sm",
                "rmsnorm_v2",
                "cutlass_rmsnorm",
            )
        ),
        shapes=("m32768-n4096-bfloat16", "m32768-n8192-bfloat16", "m16384-n16384-bfloat16"),
        launches_per_round=40,
    ),
    Group(
        "row_reduce",
        "row sum and row max (fp32 out) of a bf16 (M, N) x: our one-pass kernel (cluster/DSMEM for rows over "
        "16384 columns) against torch.sum + torch.amax",
        reference="torch_row_reduce",
        members=(Member("torch_row_reduce"), Member("row_reduce")),
        shapes=(
            "m32768-n4096-bfloat16",
            "m16384-n16384-bfloat16",
            "m4096-n65536-bfloat16",
            "m2048-n131072-bfloat16",
        ),
        launches_per_round=80,  # ~0.07 ms launches (256 MiB read): rounds >= ~5 ms
    ),
    # Programmatic dependent launch (issue 11): one launch of a member runs both kernels, so each timed
    # launch is the pair as one unit. M = 1024 is under one wave of either kernel, 4096 a few, 16384 many.
    Group(
        "pdl_pair",
        "row scale then row dot (bf16 rows of 4096, one per warp), the pair timed as one unit: launched plainly; "
        "with PDL, the consumer waiting first (only its launch overlaps); with PDL, the consumer loading its "
        "independent z row before griddepcontrol.wait",
        reference="pdl_pair_serialized",
        members=(Member("pdl_pair_serialized"), Member("pdl_pair_wait_first"), Member("pdl_pair")),
        shapes=("m4096-n4096-bfloat16", "m1024-n4096-bfloat16", "m16384-n4096-bfloat16"),
        launches_per_round=100,  # pairs of ~10-150 us: rounds of a few ms
    ),
    # Hopper FMHA forward (issue 11): our SM90 variants on the workload of CUTLASS's example's plan (randn,
    # fp32 reference with the LSE, causal FLOPs over the visible pairs), d 128, 8K tokens, b 2, 16 heads.
    Group(
        "fmha_hopper",
        "bf16 attention forward with the LSE, d = 128, s = t = 8192, b = 2, h = 16, causal and not: CUTLASS's Hopper "
        "fmha.py (persistent, 2 x 64 x 128 tiles) against our CuTe DSL variants v0 (lockstep), v1 (warp-specialized, "
        "K/V rings), v2 (ping-pong + softmax/PV overlap) and v3 (v2 + rescale skipped when no max moved)",
        reference="cutlass_hopper_fmha",
        members=tuple(Member(k) for k in ("cutlass_hopper_fmha", *FMHA_HOPPER_MEMBERS)),
        shapes=tuple(f"b2-s8192-t8192-h16-hk16-d128-causal{c}-bfloat16" for c in (0, 1)),
        launches_per_round=8,  # launches of ~1.4-2.4 ms (CUTLASS's records), v0 slower: rounds of tens of ms
    ),
)


# Issue 10: the Hopper GEMM worklog (v0..v4, v5 = hopper_gemm_ws) and its config rule (hopper_gemm_auto:
# the v5 kernel with config_rule.pick_config's choice per shape), against cuBLAS. A group has one launch
# count, so each comes in two: shapes whose launches take >= ~0.1 ms (20-40 launches a round) and the small
# ones of ~5-50 us (400 launches: rounds of ~2-20 ms).
GEMM_STEP_MEMBERS = tuple(
    Member(k)
    for k in ("cublas_gemm", "hopper_gemm_v0", "hopper_gemm_v1", "hopper_gemm_v2", "hopper_gemm_v3",
              "hopper_gemm_v4", "hopper_gemm_ws", "hopper_gemm_auto")
)  # fmt: skip
GEMM_RULE_MEMBERS = (Member("cublas_gemm"), Member("hopper_gemm_ws"), Member("hopper_gemm_auto"))
GEMM_RULE_SHAPES = (
    "m8192-n8192-k8192", "m4096-n4096-k4096", "m8000-n8008-k8200", "m5632-n3072-k8192", "m4096-n128256-k4096",
)  # fmt: skip
GEMM_RULE_SMALL_SHAPES = (
    "m2048-n2048-k2048", "m1024-n1024-k1024", "m512-n512-k512",
    "m16-n8192-k8192", "m64-n8192-k8192", "m256-n8192-k8192",
)  # fmt: skip
# Five shapes off the list, drawn with random.Random(10) (seed 10, the number): M, N, K in that order,
# each 8 * randint(32, 2048) (multiples of 8 in [256, 16384]: TMA's 16-byte rows).
# tests/test_gemm_config_rule.py draws them again and compares.
GEMM_RANDOM_SHAPES = (
    "m9616-n784-k7280", "m8160-n9720-k496", "m3632-n7832-k13576", "m8304-n13744-k4800", "m10960-n13536-k2880",
)  # fmt: skip
GROUPS += (
    Group(
        "gemm_bf16_steps",
        "bf16 GEMM at 8192^3: every step of the Hopper GEMM worklog (v0 one stage, v1 TMA pipeline, v2 warp "
        "specialization, v3 persistent, v4 TMA-store epilogue, v5 = hopper_gemm_ws: clusters + multicast) "
        "and the config rule's pick (hopper_gemm_auto) against cuBLAS",
        reference="cublas_gemm",
        members=GEMM_STEP_MEMBERS,
        shapes=("m8192-n8192-k8192-bfloat16",),
        launches_per_round=20,  # v0..v2 take several ms each at 8192^3: a round of 8 members stays short
    ),
    Group(
        "gemm_bf16_steps_small",
        "bf16 GEMM at 1024^3 (32 tiles of 128x256 for 132 SMs): the worklog steps, hopper_gemm_ws and the "
        "config rule's pick against cuBLAS",
        reference="cublas_gemm",
        members=GEMM_STEP_MEMBERS,
        shapes=("m1024-n1024-k1024-bfloat16",),
        launches_per_round=400,  # ~10-30 us launches: rounds of ~4-12 ms
    ),
    Group(
        "gemm_bf16_shapes",
        "bf16 GEMM, the large shapes of issue 10 and five random ones: hopper_gemm_ws (one config) and "
        "hopper_gemm_auto (the config rule's pick) against cuBLAS",
        reference="cublas_gemm",
        members=GEMM_RULE_MEMBERS,
        shapes=tuple(f"{s}-bfloat16" for s in (*GEMM_RULE_SHAPES, *GEMM_RANDOM_SHAPES)),
        launches_per_round=40,  # the fastest (8160x9720x496) ~0.1 ms: rounds >= ~4 ms
    ),
    Group(
        "gemm_bf16_shapes_small",
        "bf16 GEMM, the small and skinny shapes of issue 10 (2048^3 down to 512^3, M = 16/64/256 x 8192 x "
        "8192): hopper_gemm_ws and hopper_gemm_auto against cuBLAS",
        reference="cublas_gemm",
        members=GEMM_RULE_MEMBERS,
        shapes=tuple(f"{s}-bfloat16" for s in GEMM_RULE_SMALL_SHAPES),
        launches_per_round=400,  # 512^3 ~5 us: rounds >= ~2 ms
    ),
    Group(
        "gemm_fp16_shapes",
        "fp16 GEMM, the large shapes of issue 10 and the five random ones: hopper_gemm_ws, hopper_gemm_auto "
        "and CUTLASS's Hopper dense_gemm example against cuBLAS",
        reference="cublas_gemm",
        members=(*GEMM_RULE_MEMBERS, Member("cutlass_hopper_dense_gemm")),
        shapes=tuple(f"{s}-float16" for s in (*GEMM_RULE_SHAPES, *GEMM_RANDOM_SHAPES)),
        launches_per_round=40,
    ),
    Group(
        "gemm_fp16_shapes_small",
        "fp16 GEMM, the small and skinny shapes of issue 10: hopper_gemm_ws, hopper_gemm_auto and CUTLASS's "
        "Hopper dense_gemm example against cuBLAS",
        reference="cublas_gemm",
        members=(*GEMM_RULE_MEMBERS, Member("cutlass_hopper_dense_gemm")),
        shapes=tuple(f"{s}-float16" for s in GEMM_RULE_SMALL_SHAPES),
        launches_per_round=400,
    ),
)

# Issue 10, split-K (hopper_gemm_splitk: the v5 kernel over (tile, K slice) units, fp32 partials and a
# reduce, splits by its plan's rule) against the config rule's pick where C has few tiles or ragged waves.
GROUPS += (
    Group(
        "gemm_bf16_splitk",
        "bf16 GEMM where the config rule's pick trails cuBLAS (skinny M = 16/64 x 8192 x 8192, 9616 x 784 x "
        "7280, 1024^3): hopper_gemm_auto and the split-K variant hopper_gemm_splitk against cuBLAS",
        reference="cublas_gemm",
        members=(Member("cublas_gemm"), Member("hopper_gemm_auto"), Member("hopper_gemm_splitk")),
        shapes=tuple(
            f"{s}-bfloat16"
            for s in ("m16-n8192-k8192", "m64-n8192-k8192", "m9616-n784-k7280", "m1024-n1024-k1024")
        ),
        launches_per_round=200,  # ~7 us (1024^3) to ~0.2 ms (9616 x 784 x 7280): rounds of ~1.4-40 ms
    ),
)

# Anti-pattern reproductions (snippets/gpu/, pages under docs/knowledge/anti-patterns/): the bad form and the
# fixed one timed in one run.
GROUPS += (
    Group(
        "global_coalescing",
        "fp32 copy, B = A, 256 MiB each way, through 32x32 tiles: a warp's lanes along a row (128 contiguous "
        "bytes per request) against down a column (one matrix row apart: 32 sectors per request)",
        reference="copy_row_walk",
        members=(Member("copy_row_walk"), Member("copy_column_walk")),
        shapes=("m8192-n8192-float32",),
    ),
)


def all_groups() -> dict[str, Group]:
    return {g.name: g for g in GROUPS}


def get_group(name: str) -> Group:
    groups = all_groups()
    if name not in groups:
        raise EvidenceError(f"unknown group {name!r}; declared groups: {', '.join(groups)} (mla_var3/evidence/groups.py)")
    return groups[name]
