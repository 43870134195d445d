"""Plan for ``cutlass_sm100_efc_activation_gemm``: CUTLASS's ``activation_custom_epilogue_dense_gemm.py``.

The Ada FP8 GEMM epilogue in EFC form: ``Aux = (alpha scale_a scale_b) acc + (beta scale_c) C +
bias`` and ``D = activation(Aux)``, reading C and writing Aux and D. The epilogue comes from the
example's own ``create_epilogue_function(activation)``; ``efc_config.<activation>`` is one of
``common_efc.py``'s helpers (identity, relu, leaky_relu, tanh, sigmoid, silu, hardswish, gelu),
each written once for the kernel (CuTe math) and once for torch. Scalars: the argparse defaults
(alpha, beta, scale_a, scale_b, scale_c 1, bias 0, leaky-ReLU slope 0.01). Configs add the
activation: relu (the docstring's command) and gelu (its ncu command). Its ``run()`` passes no
compile options. Compile-only (no SM100 GPU here); :mod:`..common` holds the adapter.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.cutlass_efc_gemm.common import CONFIGS, EfcGemmPlan
from mla_var3.kernel.plan import Config, Tensors

ACTIVATIONS = ("relu", "gelu")


class CutlassSm100EfcActivationGemmPlan(EfcGemmPlan):
    name = "cutlass_sm100_efc_activation_gemm"
    description = (
        "CUTLASS's Blackwell activation_custom_epilogue_dense_gemm.py: an EFC epilogue Aux = alpha acc + beta C "
        "+ bias, D = activation(Aux), two fused outputs (compile-only here)"
    )
    example_file = "activation_custom_epilogue_dense_gemm.py"
    parameters = (
        "C",
        "Aux",
        "alpha",
        "beta",
        "bias",
        "scale_a",
        "scale_b",
        "scale_c",
        "D",
        "leaky_relu_alpha",
    )
    read = ("C",)
    written = ("Aux", "D")
    scalars = {
        "alpha": 1.0, "beta": 1.0, "bias": 0.0, "scale_a": 1.0, "scale_b": 1.0, "scale_c": 1.0, "leaky_relu_alpha": 0.01,
    }  # fmt: skip

    def _autotune_configs(self) -> list[Config]:
        return [{**CONFIGS[0], "activation": act} for act in ACTIVATIONS]

    def gemm_object(self, module: Any, config: Config) -> Any:
        import cutlass

        activation = config["activation"]
        return module.DenseGemmActivation(
            cutlass.Float32, cutlass.Float32, config["use_2cta_instrs"], tuple(config["mma_tiler_mn"]),
            tuple(config["cluster_shape_mn"]), module.create_epilogue_function(activation), activation,
        )  # fmt: skip

    def epilogue_reference(self, accumulator: Any, read: Tensors) -> Tensors:
        import torch

        s = self.scalars
        aux = (
            (s["alpha"] * s["scale_a"] * s["scale_b"]) * accumulator
            + (s["beta"] * s["scale_c"]) * read["C"]
            + s["bias"]
        )
        if self.default_config()["activation"] == "relu":
            return {"Aux": aux, "D": aux.relu()}
        # The kernel's gelu is the tanh approximation (common_efc.py); the example's torch check uses the erf form.
        return {"Aux": aux, "D": torch.nn.functional.gelu(aux, approximate="tanh")}


__all__ = ["ACTIVATIONS", "CutlassSm100EfcActivationGemmPlan"]
