"""Plan for ``cutlass_mamba2_ssd``: CUTLASS's Blackwell ``mamba2_ssd.py`` imported from ``CUTLASS_DIR``.

The workload is Mamba2's state-space duality (SSD) layer: per batch ``b`` and head ``h``, with
``dt`` the step size, ``a`` the (negative) decay rate and ``A(t) = sum_{u <= t} dt(u) a`` its
running sum,

    y(t) = sum_{u <= t} (C(t) . B(u)) exp(A(t) - A(u)) dt(u) x(u) + D * x(t)
    state = sum_u exp(A(T) - A(u)) dt(u) x(u) B(u)^T          (the final state, d x n)

where ``B`` and ``C`` are shared by the ``h / g`` heads of a group. The reference computes exactly
that, one ``(s, s)`` decay matrix per head in fp32; the kernel computes it chunk by chunk
(``l`` tokens each), carrying the state between chunks. Compile-only: no SM100 GPU here.

What the example expects (``examples/python/CuTeDSL/cute/blackwell/kernel/attention/mamba2_ssd/``
at the pinned commit):

- ``SSDKernel(io, cumsum, acc, L, D, N, has_d, d_has_hdim)`` (``mamba2_ssd.py:72-83``); the chunk
  ``l``, head dimension ``d`` and state size ``n`` are tile sizes, so compiled in.
- ``__call__(x, cumsum_delta, delta, b, c, y, fstate, d, max_active_clusters, stream)``
  (``:365-377``); ``cumsum_delta`` is the running sum of ``dt * a`` *within each chunk*, which
  ``run()`` computes on the host (``:3434-3451``): so does ``prepare_inputs`` here.
- Layouts (``:3365-3404``): ``x (d, l, chunks, h, b)`` over memory ``(b, h, d, s)``; ``delta``
  and ``cumsum_delta (l, chunks, h, b)`` over ``(b, h, s)``; ``b, c (l, n, chunks, g, b)`` over
  ``(b, g, n, s)``; ``y (l, d, chunks, h, b)`` over ``(b, h, d, s)``; ``fstate (d, n, h, b)``
  over ``(b, h, d, n)``; ``D (d, h)`` over ``(h, d)``. Our tensors are stored in those memory
  orders, with the sequence split as ``(chunks, l)`` (so a tensor carries the chunk length);
  ``run()`` marks the chunk, head and batch modes dynamic with ``stride_order = dim_order()``,
  and so do the fake tensors here.
- ``max_active_clusters`` is a compile-time constant from ``HardwareInfo`` (``:3465-3467``): a
  B200's 148 here. The grid is ``min(b * h, 148)`` persistent CTAs (``mamba2_ssd_tile_scheduler.py``).

Data as ``run()`` draws it (``:3335-3357``): ``x, B, C, D ~ N(0, 0.5)``, ``dt = softplus(N(0,
0.5) - 4)``, ``a = -exp(N(0, 0.5))``; bf16 in memory, ``cumsum_delta`` fp32.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.common import example_compile_context
from mla_var3.kernel.cute_python.attention.example_kernel import B200_SM_COUNT, ExampleKernel
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import element_size

if TYPE_CHECKING:
    import torch

EXAMPLE = "examples/python/CuTeDSL/cute/blackwell/kernel/attention/mamba2_ssd/mamba2_ssd.py"
# Per tensor: how our memory order (dims of the stored torch tensor) is permuted into the example's
# modes, and which of those modes run() marks dynamic (mamba2_ssd.py:3365-3404).
VIEWS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "x": ((2, 4, 3, 1, 0), (2, 3, 4)),  # (b, h, d, chunks, l) -> (d, l, chunks, h, b)
    "dt": ((3, 2, 1, 0), (1, 2, 3)),  # (b, h, chunks, l) -> (l, chunks, h, b)
    "cumsum_dt_a": ((3, 2, 1, 0), (1, 2, 3)),
    "B": ((4, 2, 3, 1, 0), (2, 3, 4)),  # (b, g, n, chunks, l) -> (l, n, chunks, g, b)
    "C": ((4, 2, 3, 1, 0), (2, 3, 4)),
    "y": ((4, 2, 3, 1, 0), (2, 3, 4)),  # (b, h, d, chunks, l) -> (l, d, chunks, h, b)
    "fstate": ((2, 3, 1, 0), (2, 3)),  # (b, h, d, n) -> (d, n, h, b)
    "D": ((1, 0), (1,)),  # (h, d) -> (d, h)
}
ARGUMENTS = ("x", "cumsum_dt_a", "dt", "B", "C", "y", "fstate", "D")  # __call__'s order
DATA = "x, B, C, D ~ N(0, 0.5); dt = softplus(N(0, 0.5) - 4); a = -exp(N(0, 0.5)) (bf16; cumsum of dt*a per chunk in fp32)"


def stored_shape(name: str, shape: Shape) -> tuple[int, ...]:
    """The stored torch tensor's shape, the sequence split into ``(chunks, l)``."""
    b, h, g, s, d, n, ell = (shape[k] for k in ("b", "h", "g", "s", "d", "n", "l"))
    chunks = s // ell
    return {
        "x": (b, h, d, chunks, ell),
        "dt": (b, h, chunks, ell),
        "cumsum_dt_a": (b, h, chunks, ell),
        "B": (b, g, n, chunks, ell),
        "C": (b, g, n, chunks, ell),
        "y": (b, h, d, chunks, ell),
        "fstate": (b, h, d, n),
        "D": (h, d),
    }[name]


def shape_of(inputs: Tensors) -> Shape:
    """The shape flags our stored inputs were made for."""
    b, h, d, chunks, ell = inputs["x"].shape
    g, n = inputs["B"].shape[1:3]
    return {"b": b, "h": h, "g": g, "s": chunks * ell, "d": d, "n": n, "l": ell}


def fake_operand(name: str, shape: Shape, dtype: Any) -> Any:
    """A tensor-free operand typed like :func:`operand`: static tile modes, dynamic marked modes."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor

    permute, dynamic = VIEWS[name]
    stored = stored_shape(name, shape)
    modes = tuple(cute.sym_int() if i in dynamic else stored[p] for i, p in enumerate(permute))
    # torch's dim_order lists modes outermost first; a compact fake's stride_order ranks them innermost first.
    outermost_first = sorted(range(len(permute)), key=lambda m: permute[m])
    order = tuple(len(permute) - 1 - outermost_first.index(m) for m in range(len(permute)))
    return make_fake_compact_tensor(dtype, modes, stride_order=order, assumed_align=16)


def operand(name: str, t: torch.Tensor) -> Any:
    """Our stored tensor as the example's view, marked as ``run()`` marks it."""
    from cutlass.cute.runtime import from_dlpack

    view = t.permute(*VIEWS[name][0])
    tensor = from_dlpack(view, assumed_align=16)
    for mode in VIEWS[name][1]:
        tensor = tensor.mark_compact_shape_dynamic(mode=mode, stride_order=view.dim_order())
    return tensor


def ssd_reference(inputs: Tensors) -> Tensors:
    """``y`` and the final ``state (b, h, d, n)`` of the SSD recurrence, in fp32 (quadratic form)."""
    import torch

    b, h, g, s = (shape_of(inputs)[k] for k in ("b", "h", "g", "s"))
    x, dt = inputs["x"].float().flatten(-2), inputs["dt"].float().flatten(-2)  # (b, h, d, s), (b, h, s)
    a, d_skip = inputs["a"].float(), inputs["D"].float()  # (h,), (h, d)
    bb, cc = inputs["B"].float().flatten(-2), inputs["C"].float().flatten(-2)  # (b, g, n, s)
    big_a = torch.cumsum(dt * a[None, :, None], dim=-1)  # (b, h, s), over the whole sequence
    causal = torch.ones(s, s, dtype=torch.bool, device=x.device).tril()
    y = torch.empty_like(x)
    state = torch.empty((b, h, x.shape[2], bb.shape[2]), dtype=torch.float32, device=x.device)
    for i in range(b):
        for j in range(h):
            grp = j // (h // g)
            decay = (big_a[i, j][:, None] - big_a[i, j][None, :]).masked_fill(~causal, float("-inf")).exp()
            scores = (cc[i, grp].T @ bb[i, grp]) * decay * dt[i, j][None, :]  # (t, u)
            y[i, j] = x[i, j] @ scores.T + d_skip[j][:, None] * x[i, j]
            weight = (big_a[i, j, -1] - big_a[i, j]).exp() * dt[i, j]  # (s,)
            state[i, j] = (x[i, j] * weight) @ bb[i, grp].T
    return {"y": y.view(inputs["x"].shape), "fstate": state}


class CutlassMamba2SsdPlan(KernelPlan):
    name = "cutlass_mamba2_ssd"
    layer = "attention"
    description = (
        "CUTLASS's Blackwell mamba2_ssd.py imported from CUTLASS_DIR: chunked SSD scan, four tcgen05 GEMMs per chunk "
        "(intra-chunk C.B^T and its masked product with x, chunk state and its contribution), state carried in registers"
    )
    archs = ("sm_100a",)
    dtypes = ("bfloat16", "float16")
    data_distribution: ClassVar[str] = DATA
    shape_params = (
        ShapeParam("b", 4, "batch"),
        ShapeParam("h", 80, "heads (E x H of the example)"),
        ShapeParam("g", 2, "groups sharing B and C (h must be a multiple)"),
        ShapeParam("s", 4096, "sequence length (a multiple of --l)"),
        ShapeParam("d", 64, "head dimension", minimum=16),
        ShapeParam("n", 128, "state size", minimum=16),
        ShapeParam("l", 128, "chunk length", minimum=64),
    )
    static_shape_params = ("d", "n", "l")  # the kernel's tile shape; the rest is dynamic

    @classmethod
    def upstream_example(cls) -> str:
        return EXAMPLE

    def validate_shape(self, shape: Shape) -> None:
        if shape["h"] % shape["g"]:
            raise UnsupportedShapeError(
                f"{self.name} needs --h (={shape['h']}) to be a multiple of --g (={shape['g']})"
            )
        if shape["s"] % shape["l"]:
            raise UnsupportedShapeError(
                f"{self.name} needs --s (={shape['s']}) to be a multiple of --l (={shape['l']})"
            )

    def prepare_inputs(self, shape: Shape) -> Tensors:
        import torch
        import torch.nn.functional as F

        b, h, g, s, d, n, ell = (shape[k] for k in ("b", "h", "g", "s", "d", "n", "l"))
        dtype = getattr(torch, self.dtype)

        def normal(*dims: int) -> torch.Tensor:
            return torch.randn(dims, device="cuda") * 0.5

        chunks = s // ell
        dt = F.softplus(normal(b, h, chunks, ell) - 4).to(dtype)
        a = -normal(h).exp().to(dtype)
        chunk_cumsum = torch.cumsum(dt.float() * a.float()[None, :, None, None], dim=-1)  # within each chunk
        inputs = {
            "x": normal(b, h, d, chunks, ell),
            "B": normal(b, g, n, chunks, ell),
            "C": normal(b, g, n, chunks, ell),
        }
        inputs = {k: v.to(dtype) for k, v in inputs.items()}
        return inputs | {"dt": dt, "a": a, "cumsum_dt_a": chunk_cumsum, "D": normal(h, d).to(dtype)}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        b, h, d = inputs["x"].shape[:3]
        state = torch.empty((b, h, d, shape["n"]), dtype=inputs["x"].dtype, device=inputs["x"].device)
        return {"y": torch.empty_like(inputs["x"]), "fstate": state}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        return ssd_reference(inputs)

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        """Per chunk: C.B^T once per group, then (C.B^T masked) x, the chunk state and C . state per head."""
        b, h, g, s, d, n, ell = (shape[k] for k in ("b", "h", "g", "s", "d", "n", "l"))
        chunks = s // ell
        flops = b * chunks * (g * 2 * ell * ell * n + h * (2 * ell * ell * d + 4 * ell * n * d))
        io = element_size(self.dtype)
        nbytes = (
            io * (2 * b * h * d * s + b * h * s + 2 * b * g * n * s + h * d + b * h * d * n) + 4 * b * h * s
        )
        return flops, nbytes

    def _autotune_configs(self) -> list[Config]:
        return [{"fuse_scale_d": "vector"}]  # run()'s default: y += D * x with D per head and channel

    # --8<-- [start:plan]
    def plan(self, config: Config) -> ExampleKernel:
        import cutlass

        from mla_var3.kernel.tensors import cute_dtype
        from mla_var3.kernel.upstream import load_example

        example = load_example(EXAMPLE)
        io = cute_dtype(self.dtype)

        def host_for(shape: Shape) -> Any:
            f32 = cutlass.Float32
            return example.SSDKernel(io, f32, f32, shape["l"], shape["d"], shape["n"], True, True)

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            types = {"cumsum_dt_a": cutlass.Float32}
            fakes = tuple(fake_operand(name, shape, types.get(name, io)) for name in ARGUMENTS)
            return (*fakes, B200_SM_COUNT)  # max_active_clusters: one CTA per SM of a B200

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            tensors = inputs | outputs
            return tuple(
                operand(name, tensors[name]) for name in ARGUMENTS
            )  # max_active_clusters is compiled in

        return ExampleKernel(
            host_for=host_for,
            compile_args=compile_args,
            launch_args=launch_args,
            compile_context=example_compile_context(),
        )

    # --8<-- [end:plan]


__all__ = [
    "EXAMPLE",
    "CutlassMamba2SsdPlan",
    "fake_operand",
    "operand",
    "shape_of",
    "ssd_reference",
    "stored_shape",
]
