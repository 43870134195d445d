"""Plan for ``cutlass_sm100_efc_custom_epilogue_gemm``: CUTLASS's ``custom_epilogue_dense_gemm.py``.

The epilogue reads C and X and writes Y and D: ``Y = acc`` and ``D = relu(alpha acc + beta C) +
x_factor X`` with the docstring command's scalars (alpha 2, beta 1, x_factor 3). The module
docstring of the example states D without the relu; the epilogue function in its ``run()`` applies
it, and its own check evaluates that function, so the relu is what it computes. That function is
local to ``run()``, so :func:`epilogue` here is ours, written to the same EFC contract (first
parameter ``efc_config``, then the named tensors and scalars). Its ``run()`` compiles with
``--opt-level=3 --enable-assertions --generate-line-info``; so does this plan. Compile-only (no
SM100 GPU here); :mod:`..common` holds the adapter.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.cutlass_efc_gemm.common import EfcGemmPlan
from mla_var3.kernel.plan import Config, Tensors


# --8<-- [start:epilogue]
def epilogue(efc_config: Any, C: Any, D: Any, alpha: Any, beta: Any, X: Any, x_factor: Any, Y: Any) -> None:  # noqa: N803
    """Y = acc; D = relu(alpha acc + beta C) + x_factor X. Every load happens before any store."""
    Y.store(efc_config.accum())
    D.store(efc_config.relu(efc_config.accum() * alpha + C.load() * beta) + X.load() * x_factor)


# --8<-- [end:epilogue]


class CutlassSm100EfcCustomEpilogueGemmPlan(EfcGemmPlan):
    name = "cutlass_sm100_efc_custom_epilogue_gemm"
    description = (
        "CUTLASS's Blackwell custom_epilogue_dense_gemm.py: an EFC epilogue that reads C and X and writes Y = acc "
        "and D = relu(alpha acc + beta C) + x_factor X through TMA (compile-only here)"
    )
    example_file = "custom_epilogue_dense_gemm.py"
    parameters = ("C", "D", "alpha", "beta", "X", "x_factor", "Y")
    read = ("C", "X")
    written = ("D", "Y")
    scalars = {"alpha": 2.0, "beta": 1.0, "x_factor": 3.0}
    options = "--opt-level=3 --enable-assertions --generate-line-info"

    def gemm_object(self, module: Any, config: Config) -> Any:
        import cutlass

        return module.DenseGemmAlphaBeta(
            cutlass.Float32, cutlass.Float32, config["use_2cta_instrs"], tuple(config["mma_tiler_mn"]),
            tuple(config["cluster_shape_mn"]), epilogue,
        )  # fmt: skip

    def epilogue_reference(self, accumulator: Any, read: Tensors) -> Tensors:
        s = self.scalars
        d = (accumulator * s["alpha"] + read["C"] * s["beta"]).relu() + read["X"] * s["x_factor"]
        return {"Y": accumulator, "D": d}


__all__ = ["CutlassSm100EfcCustomEpilogueGemmPlan", "epilogue"]
