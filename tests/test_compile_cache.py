"""The compile cache: cold compile, memory and disk hits, keys, stale sources, corrupt entries."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from mla_var3.analysis import ToolNotFoundError
from mla_var3.kernel import compile_cache
from mla_var3.kernel.arch import Arch
from mla_var3.kernel.backends import CuteKernel, TorchKernel
from mla_var3.kernel.compile_cache import (
    CUBIN,
    META,
    OBJECT,
    cache_key,
    clear_memory_cache,
    compile_cached,
    host_launch_smem,
    key_parts,
)
from mla_var3.kernel.cute_python.attention.example_kernel import launch_smem_bytes
from mla_var3.kernel.plan import Config, KernelPlan, Shape, ShapeParam, Tensors

TINY_SOURCE = Path(__file__).parent / "fixtures" / "analysis" / "tiny_kernels.py"
SHAPE = {"n": 4096}
CONFIG: Config = {"variant": "a"}


def load_tiny(path: Path = TINY_SOURCE) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"tiny_{abs(hash(path))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TinyPlan(KernelPlan):
    """y = 2 x on float32, for the cache tests (not registered)."""

    name = "tiny_scale"
    layer = "elementwise"
    description = "y = 2 x (compile-cache tests)"
    archs = ("sm_80", "sm_90a", "sm_100a")
    dtypes = ("float32",)
    shape_params = (ShapeParam("n", 4096, "elements, a multiple of 128"),)
    source: Path = TINY_SOURCE

    @classmethod
    def source_files(cls) -> tuple[Path, ...]:
        return (Path(__file__).resolve(), cls.source)

    def prepare_inputs(self, shape: Shape) -> Tensors:
        from mla_var3.kernel.tensors import randn

        return {"x": randn((shape["n"],), "float32")}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {"y": torch.empty_like(inputs["x"])}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        return {"y": inputs["x"].double() * 2}

    def _autotune_configs(self) -> list[Config]:
        return [CONFIG]

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        return shape["n"], 8 * shape["n"]

    def plan(self, config: Config) -> CuteKernel:
        import cutlass

        from mla_var3.kernel.tensors import fake_tensor, to_cute

        tiny = load_tiny(self.source)
        return CuteKernel(
            host_fn=tiny.scale_by_two,
            compile_args=lambda shape: (
                fake_tensor(cutlass.Float32, (shape["n"],)),
                fake_tensor(cutlass.Float32, (shape["n"],)),
            ),
            launch_args=lambda inputs, outputs: (to_cute(inputs["x"]), to_cute(outputs["y"])),
            dynamic_smem_bytes=lambda shape: 0,
        )


class TinyTorchPlan(TinyPlan):
    name = "tiny_scale_torch"
    backend = "torch"

    def plan(self, config: Config) -> TorchKernel:  # type: ignore[override]
        def fn(inputs: Tensors, outputs: Tensors) -> None:
            outputs["y"].copy_(inputs["x"] * 2)

        return TorchKernel(fn=fn)


pytestmark = pytest.mark.usefixtures("fresh_compile_cache")


@pytest.fixture(scope="module")
def sm90_entry(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """One good sm_90a entry of TinyPlan and its cubin, compiled once for the tests that damage a copy."""
    cache = tmp_path_factory.mktemp("template-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MLA_VAR3_CACHE_DIR", str(cache))
        cold = compile_cached(TinyPlan(), CONFIG, SHAPE, "sm_90a")
    clear_memory_cache()
    assert cold.entry is not None
    return cold.entry, cold.compiled.cubin  # type: ignore[return-value]


def _install(entry: Path, cache: Path) -> Path:
    """A copy of a template entry in this test's (empty) cache."""
    return Path(shutil.copytree(entry, cache / entry.name))


def test_cold_then_memory_then_disk(tmp_cache: Path) -> None:
    plan = TinyPlan()
    cold = compile_cached(plan, CONFIG, SHAPE, "sm_90a")
    assert (cold.source, cold.warm) == ("compile", False)
    assert cold.cold_s > 0 and cold.seconds >= cold.cold_s and cold.analysis_s > 0
    assert cold.entry == tmp_cache / cold.key
    assert sorted(p.name for p in cold.entry.iterdir()) == sorted([CUBIN, META, OBJECT])
    assert cold.analysis is not None and cold.analysis.sass.classes == {"ldg_32": 1, "stg_32": 1}
    assert cold.analysis_dict()["dynamic_smem_bytes"] == 0  # type: ignore[index]
    assert cold.compiled.kernel_names and cold.compiled.kernel_names[0].startswith("kernel_cutlass_")

    memory = compile_cached(plan, CONFIG, SHAPE, Arch.parse("sm_90a"))
    assert (memory.source, memory.warm) == ("memory", True)
    assert memory.compiled is cold.compiled and memory.seconds < cold.seconds

    clear_memory_cache()
    disk = compile_cached(plan, CONFIG, SHAPE, "sm_90a")
    assert disk.source == "disk" and disk.entry == cold.entry
    assert disk.compiled.fn is not None and disk.compiled.fn is not cold.compiled.fn  # loaded from function.o
    assert disk.compiled.cubin == cold.compiled.cubin and disk.cold_s == cold.cold_s
    assert disk.analysis == cold.analysis and disk.compiled.kernel_names == cold.compiled.kernel_names
    assert disk.seconds < cold.cold_s
    timing = disk.timing_dict()
    assert timing["source"] == "disk" and timing["cold_s"] == cold.cold_s and timing["key"] == cold.key


def test_compile_only_disk_hit_skips_the_function() -> None:
    plan = TinyPlan()
    compile_cached(plan, CONFIG, SHAPE, "sm_100a")
    clear_memory_cache()
    compile_only = compile_cached(plan, CONFIG, SHAPE, "sm_100a", need_function=False)
    assert compile_only.source == "disk" and compile_only.compiled.fn is None and compile_only.compiled.cubin
    again = compile_cached(plan, CONFIG, SHAPE, "sm_100a", need_function=False)
    assert again.source == "memory"
    launchable = compile_cached(plan, CONFIG, SHAPE, "sm_100a")  # now the function is needed
    assert launchable.source == "disk" and launchable.compiled.fn is not None


def test_key_covers_arch_config_shape_dsl_and_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = TinyPlan()
    sm90 = Arch.parse("sm_90a")
    keys = {
        cache_key(key_parts(plan, CONFIG, SHAPE, sm90)),
        cache_key(key_parts(plan, CONFIG, SHAPE, Arch.parse("sm_100a"))),
        cache_key(key_parts(plan, {"variant": "b"}, SHAPE, sm90)),
        cache_key(key_parts(plan, CONFIG, {"n": 8192}, sm90)),
    }
    edited = tmp_path / "tiny_edited.py"
    shutil.copy(TINY_SOURCE, edited)

    class Edited(TinyPlan):
        source = edited

    before_edit = cache_key(key_parts(Edited(), CONFIG, SHAPE, sm90))
    edited.write_text(edited.read_text().replace("2.0", "3.0"))
    keys |= {before_edit, cache_key(key_parts(Edited(), CONFIG, SHAPE, sm90))}
    monkeypatch.setattr(compile_cache, "dsl_identity", lambda: "cutlass-dsl 0.0 cuda 0.0")
    keys.add(cache_key(key_parts(plan, CONFIG, SHAPE, sm90)))
    assert len(keys) == 7


def test_a_dynamic_shape_kernel_is_keyed_on_its_static_params_only() -> None:
    from mla_var3.kernel.registry import get_plan

    sm90 = Arch.parse("sm_90a")

    def keys(name: str, dtype: str, shapes: list[Shape]) -> set[str]:
        plan = get_plan(name)(dtype)
        return {cache_key(key_parts(plan, plan.default_config(), shape, sm90)) for shape in shapes}

    gemm_shapes = [{"m": 8192, "n": 8192, "k": 8192}, {"m": 1000, "n": 1048, "k": 520}]
    assert len(keys("hopper_gemm_ws", "bfloat16", gemm_shapes)) == 1  # one binary per config and dtype
    assert keys("hopper_gemm_ws", "bfloat16", gemm_shapes) != keys("hopper_gemm_ws", "float16", gemm_shapes)
    assert len(keys("elementwise_add", "bfloat16", [{"n": 1}, {"n": 1 << 27}])) == 1
    assert (
        len(
            keys(
                "sm100_gemm_tcgen05",
                "bfloat16",
                [{"m": 256, "n": 512, "k": 520}, {"m": 128, "n": 256, "k": 64}],
            )
        )
        == 2
    )

    class HalfStatic(TinyPlan):
        shape_params = (ShapeParam("n", 4096, "elements"), ShapeParam("batch", 1, "batches"))
        static_shape_params = ("batch",)

    half = HalfStatic()
    assert key_parts(half, CONFIG, {"n": 1, "batch": 2}, sm90)["shape"] == "batch2-float32"
    assert key_parts(half, CONFIG, {"n": 7, "batch": 2}, sm90) == key_parts(
        half, CONFIG, {"n": 1, "batch": 2}, sm90
    )


def test_a_source_edit_is_never_served_stale(tmp_path: Path) -> None:
    source = tmp_path / "tiny_live.py"
    shutil.copy(TINY_SOURCE, source)

    class Live(TinyPlan):
        pass

    Live.source = source  # the class body cannot see this function's locals under this name
    first = compile_cached(Live(), CONFIG, SHAPE, "sm_80")
    assert compile_cached(Live(), CONFIG, SHAPE, "sm_80").source == "memory"
    source.write_text(source.read_text().replace("cutlass.Float32(2.0)", "cutlass.Float32(3.0)"))
    second = compile_cached(Live(), CONFIG, SHAPE, "sm_80")
    assert second.source == "compile" and second.key != first.key
    # 2 x compiles to FADD x, x; 3 x to FMUL: the new entry really is the new code.
    assert "FADD" in first.analysis.sass.opcodes and "FMUL" in second.analysis.sass.opcodes  # type: ignore[union-attr]


def _corrupt(entry: Path, how: str) -> None:
    if how == "meta-garbage":
        (entry / META).write_text("{not json")
    elif how == "meta-missing":
        (entry / META).unlink()
    elif how == "cubin-truncated":
        (entry / CUBIN).write_bytes((entry / CUBIN).read_bytes()[:100])
    elif how == "object-corrupt":
        data = bytearray((entry / OBJECT).read_bytes())
        data[len(data) // 2] ^= 0xFF
        (entry / OBJECT).write_bytes(bytes(data))
    elif how == "meta-wrong-key":
        meta = json.loads((entry / META).read_text())
        meta["key"] = "0" * 64
        (entry / META).write_text(json.dumps(meta))


@pytest.mark.parametrize(
    "how", ["meta-garbage", "meta-missing", "cubin-truncated", "object-corrupt", "meta-wrong-key"]
)
def test_a_corrupt_entry_is_recompiled(how: str, sm90_entry: tuple[Path, bytes], tmp_cache: Path) -> None:
    plan = TinyPlan()
    template, cubin = sm90_entry
    _corrupt(_install(template, tmp_cache), how)
    rebuilt = compile_cached(plan, CONFIG, SHAPE, "sm_90a")
    assert rebuilt.source == "compile"
    assert any("unusable" in note for note in rebuilt.notes)
    assert rebuilt.compiled.cubin == cubin
    clear_memory_cache()
    assert compile_cached(plan, CONFIG, SHAPE, "sm_90a").source == "disk"  # the entry was rewritten


def test_an_entry_without_analysis_is_completed_on_load(
    sm90_entry: tuple[Path, bytes], tmp_cache: Path
) -> None:
    entry = _install(sm90_entry[0], tmp_cache)
    meta = json.loads((entry / META).read_text())
    analysis, meta["analysis"] = meta["analysis"], None
    (entry / META).write_text(json.dumps(meta))
    warm = compile_cached(TinyPlan(), CONFIG, SHAPE, "sm_90a", need_function=False)
    assert warm.source == "disk" and warm.analysis is not None and warm.analysis.to_dict() == analysis
    assert json.loads((entry / META).read_text())["analysis"] == analysis


def test_missing_tools_do_not_block_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_tools(*args: object, **kwargs: object) -> None:
        raise ToolNotFoundError("nvdisasm not found: install the analysis extra")

    monkeypatch.setattr(compile_cache, "analyze_cubin", no_tools)
    result = compile_cached(TinyPlan(), CONFIG, SHAPE, "sm_90a")
    assert result.source == "compile" and result.analysis is None
    assert result.analysis_dict() == {
        "error": "nvdisasm not found: install the analysis extra",
        "dynamic_smem_bytes": 0,
    }
    assert result.entry is not None and json.loads((result.entry / META).read_text())["analysis"] is None


def test_without_an_object_runs_recompile_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_object(fn: object, prefix: str, notes: list[str]) -> None:
        notes.append("object export failed (test)")

    monkeypatch.setattr(compile_cache, "_export_object", no_object)
    plan = TinyPlan()
    cold = compile_cached(plan, CONFIG, SHAPE, "sm_90a")
    assert cold.entry is not None and not (cold.entry / OBJECT).exists()
    clear_memory_cache()
    assert compile_cached(plan, CONFIG, SHAPE, "sm_90a", need_function=False).source == "disk"
    assert compile_cached(plan, CONFIG, SHAPE, "sm_90a").source == "compile"
    assert compile_cached(plan, CONFIG, SHAPE, "sm_90a").source == "memory"


def test_writes_are_atomic_and_leave_no_temporaries(tmp_cache: Path) -> None:
    plan = TinyPlan()
    for arch in ("sm_80", "sm_90a"):
        compile_cached(plan, CONFIG, SHAPE, arch)
    entries = sorted(p.name for p in tmp_cache.iterdir())
    assert len(entries) == 2 and not any(name.startswith(".") for name in entries)


def test_torch_plans_are_cached_in_memory_only(tmp_cache: Path) -> None:
    plan = TinyTorchPlan()
    first = compile_cached(plan, CONFIG, SHAPE, "sm_80")
    assert first.source == "compile" and first.entry is None and first.analysis_dict() is None
    assert compile_cached(plan, CONFIG, SHAPE, "sm_80").source == "memory"
    assert not tmp_cache.exists() or not any(tmp_cache.iterdir())


def _smem_plan(tmp_path: Path, smem: int) -> TinyPlan:
    """TinyPlan whose launch asks for ``smem`` bytes of dynamic SMEM (a source of its own: its own key)."""
    source = tmp_path / f"tiny_smem_{smem}.py"
    source.write_text(TINY_SOURCE.read_text().replace("stream=stream)", f"smem={smem}, stream=stream)"))

    class SmemPlan(TinyPlan):
        pass

    SmemPlan.source = source
    return SmemPlan()


def _args_probe(calls: list[str]) -> compile_cache.FactProbe:
    """A probe that wraps a hook (as a real one does): the shapes of the fake tensors the compile traced."""

    def probe(kernel: CuteKernel) -> object:
        traced: list[str] = []
        compile_args = kernel.compile_args

        def tracing(shape: Shape) -> tuple[object, ...]:
            args = compile_args(shape)
            traced.extend(str(arg.shape) for arg in args)
            return args

        kernel.compile_args = tracing
        calls.append("probe")
        return lambda compiled: tuple(traced)

    return probe


def test_facts_are_recorded_at_compile_and_equal_a_fresh_compiles(tmp_path: Path) -> None:
    plan, calls = _smem_plan(tmp_path, 4096), []
    facts = {"host_launch_smem": host_launch_smem, "traced_args": _args_probe(calls)}
    cold = compile_cached(plan, CONFIG, SHAPE, "sm_90a", need_function=False, facts=facts)
    assert cold.source == "compile" and calls == ["probe"]
    fresh = plan.plan(CONFIG).compile(SHAPE, Arch.parse("sm_90a"))  # outside the cache
    assert cold.facts == {
        "host_launch_smem": launch_smem_bytes(fresh.fn.ir_module),
        "traced_args": ["(4096,)"] * 2,
    }
    assert cold.facts["host_launch_smem"] == [4096]  # the host IR's launch really carries the new size
    assert cold.entry is not None and json.loads((cold.entry / META).read_text())["facts"] == cold.facts
    clear_memory_cache()
    warm = compile_cached(plan, CONFIG, SHAPE, "sm_90a", need_function=False, facts=facts)
    assert warm.source == "disk" and warm.facts == cold.facts and calls == ["probe"]  # read, not re-probed
    assert compile_cached(plan, CONFIG, SHAPE, "sm_90a", need_function=False, facts=facts).source == "memory"
    other = _smem_plan(tmp_path, 2048)  # a source edit: a new key, compiled, its own facts
    edited = compile_cached(other, CONFIG, SHAPE, "sm_90a", need_function=False, facts=facts)
    assert (
        edited.source == "compile" and edited.key != cold.key and edited.facts["host_launch_smem"] == [2048]
    )


def test_an_entry_without_a_requested_fact_is_recompiled_and_keeps_its_others(tmp_path: Path) -> None:
    plan, calls = _smem_plan(tmp_path, 4096), []
    plain = compile_cached(plan, CONFIG, SHAPE, "sm_90a", need_function=False)
    assert plain.facts == {} and plain.entry is not None
    meta = json.loads((plain.entry / META).read_text())
    del meta["facts"]  # as written before facts existed: still a hit for a caller that needs none
    (plain.entry / META).write_text(json.dumps(meta))
    clear_memory_cache()
    assert compile_cached(plan, CONFIG, SHAPE, "sm_90a", need_function=False).source == "disk"
    smem = compile_cached(
        plan, CONFIG, SHAPE, "sm_90a", need_function=False, facts={"smem": host_launch_smem}
    )
    assert smem.source == "compile" and smem.facts == {"smem": [4096]}  # not from memory either
    clear_memory_cache()
    args = compile_cached(
        plan, CONFIG, SHAPE, "sm_90a", need_function=False, facts={"args": _args_probe(calls)}
    )
    assert args.source == "compile" and any("lacks the facts args" in note for note in args.notes)
    assert args.facts == {"smem": [4096], "args": ["(4096,)"] * 2}
    clear_memory_cache()
    both = compile_cached(
        plan, CONFIG, SHAPE, "sm_90a", facts={"smem": host_launch_smem, "args": _args_probe(calls)}
    )
    assert both.source == "disk" and both.facts == args.facts and calls == ["probe"]


def test_a_fact_that_is_not_json_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match=r"compile fact 'fn' is not JSON .*FactProbe must return JSON values"):
        compile_cached(
            TinyPlan(), CONFIG, SHAPE, "sm_90a", facts={"fn": lambda kernel: lambda compiled: compiled.fn}
        )


@pytest.mark.gpu
def test_a_function_loaded_from_disk_launches() -> None:
    import torch

    major, minor = torch.cuda.get_device_capability()
    arch = f"sm_{major}{minor}a" if major >= 9 else "sm_80"  # DSL builds are SASS-only: match the GPU
    plan = TinyPlan()
    compile_cached(plan, CONFIG, SHAPE, arch)
    clear_memory_cache()
    warm = compile_cached(plan, CONFIG, SHAPE, arch)
    assert warm.source == "disk"
    inputs = plan.prepare_inputs(SHAPE)
    outputs = {"y": torch.full_like(inputs["x"], float("nan"))}
    plan.plan(CONFIG).launch(warm.compiled, inputs, outputs)
    torch.cuda.synchronize()
    torch.testing.assert_close(outputs["y"].double(), plan.reference_fn(inputs)["y"])
