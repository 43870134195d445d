"""What the two imported epilogue-fusion (EFC) GEMM plans share: the GEMM, the configs, the adapter.

CUTLASS's ``custom_epilogue_dense_gemm.py`` and ``activation_custom_epilogue_dense_gemm.py`` (folder
``examples/python/CuTeDSL/cute/blackwell/efc/`` at the pinned commit) subclass ``DenseGemmEFC``
(``common_dense_gemm_efc.py``): a persistent, warp-specialized SM100 GEMM whose epilogue is a plain
Python function ``epilogue(efc_config, <named tensors and scalars>)``. ``common_efc.py`` runs that
function three times: once to find which tensors it reads and writes, once traced into the kernel
per accumulator fragment, once on torch tensors as the reference. Both examples import their
siblings by bare name (``from common_dense_gemm_efc import ...``), so their folder goes on
``sys.path``.

The workload: C-shaped fp16 tensors next to the GEMM (standard normal inputs, A and B as in our
GEMM workload: (M, K) and (N, K) K-major), fp32 accumulation and epilogue math. A variant names
its file, its epilogue and its supplemental tensors; the reference evaluates the same epilogue in
torch. Compile-only: no SM100 GPU here.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mla_var3.kernel.cute_python.attention.example_kernel import B200_SM_COUNT, ExampleKernel
from mla_var3.kernel.cute_python.gemm.common import GemmPlanBase
from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.operands import batched, fake_batched
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.tensors import cute_dtype, element_size, randn

EFC_DIR = "examples/python/CuTeDSL/cute/blackwell/efc"
# --8<-- [start:configs]
# The docstrings' commands: 2-CTA 128x128 MMA on a 2x1 cluster; then one CTA, 128x128, no cluster.
CONFIGS: tuple[Config, ...] = (
    {"mma_tiler_mn": (128, 128), "cluster_shape_mn": (2, 1), "use_2cta_instrs": True},
    {"mma_tiler_mn": (128, 128), "cluster_shape_mn": (1, 1), "use_2cta_instrs": False},
)
# --8<-- [end:configs]


class EfcGemmPlan(GemmPlanBase):
    """A GEMM whose epilogue reads ``read`` and writes ``written`` C-shaped tensors."""

    archs = ("sm_100a",)
    dtypes = ("float16", "bfloat16")
    backend = "cute"
    static_shape_params = ()  # every extent and stride is dynamic in the examples' run()
    example_file: ClassVar[str]
    # The epilogue's parameters in order: tensor names are in read or written, the rest are scalars.
    parameters: ClassVar[tuple[str, ...]]
    read: ClassVar[tuple[str, ...]]
    written: ClassVar[tuple[str, ...]]
    scalars: ClassVar[dict[str, float]]
    options: ClassVar[str] = ""  # the compile options the example's run() passes

    @classmethod
    def upstream_example(cls) -> str:
        return f"{EFC_DIR}/{cls.example_file}"

    def _autotune_configs(self) -> list[Config]:
        return [dict(config) for config in CONFIGS]

    def prepare_inputs(self, shape: Shape) -> Tensors:
        inputs = super().prepare_inputs(shape)
        for name in self.read:
            inputs[name] = randn((shape["m"], shape["n"]), self.dtype)
        return inputs

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        a = inputs["a"]
        return {
            name: torch.empty((shape["m"], shape["n"]), dtype=a.dtype, device=a.device)
            for name in self.written
        }

    def reference_fn(self, inputs: Tensors) -> Tensors:
        accumulator = super().reference_fn(inputs)["c"]
        return self.epilogue_reference(accumulator, {name: inputs[name].float() for name in self.read})

    def epilogue_reference(self, accumulator: Any, read: Tensors) -> Tensors:
        """The written tensors in fp32 from the fp32 accumulator and the read tensors."""
        raise NotImplementedError

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        flops, gemm_bytes = super()._algorithmic_flops_bytes(shape)
        m, n = shape["m"], shape["n"]
        # Our base counts one C; the epilogue reads len(read) and writes len(written) C-shaped tensors.
        extra = (len(self.read) + len(self.written) - 1) * m * n * element_size(self.dtype)
        return flops, gemm_bytes + extra

    def gemm_object(self, module: Any, config: Config) -> Any:
        """The example's GEMM object with our epilogue."""
        raise NotImplementedError

    def plan(self, config: Config) -> ExampleKernel:
        from mla_var3.kernel.cute_python.gemm.cutlass_efc_gemm.host import EfcHost
        from mla_var3.kernel.upstream import load_example

        module = load_example(self.upstream_example(), extra_paths=(EFC_DIR,))
        cluster = tuple(config["cluster_shape_mn"])
        host = EfcHost(self.gemm_object(module, config), B200_SM_COUNT // (cluster[0] * cluster[1]))
        dtype = cute_dtype(self.dtype)

        def supplemental(tensors: dict[str, Any]) -> tuple[Any, ...]:
            return tuple(tensors[name] if name in tensors else self.scalars[name] for name in self.parameters)

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            fakes = {name: fake_batched(dtype) for name in (*self.read, *self.written)}
            return (fake_batched(dtype), fake_batched(dtype), host.prepare(supplemental(fakes)))

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            tensors = {name: batched(t) for name, t in (*inputs.items(), *outputs.items()) if t.dim() == 2}
            packed = host.gemm.efc.jit.pack_arguments(*supplemental(tensors))
            return (tensors["a"], tensors["b"], packed)

        return ExampleKernel(
            host_for=lambda shape: host,
            compile_args=compile_args,
            launch_args=launch_args,
            options=self.options,
        )


__all__ = ["CONFIGS", "EFC_DIR", "EfcGemmPlan"]
