"""``rmsnorm_v3``'s launch rule at many row lengths, computed on a CPU while the devlog is built.

:func:`rule_table` reads the rule from the plan's own functions (``staged_rows``, the plan's
``check_shape``): threads per row, rows and bytes per stage, stages, the x bytes one CTA has in
flight while it works on a stage, the CTAs sharing an SM and the vectors each thread holds; a
length the kernel refuses shows the first words of its error. :func:`row_ranges` gives, for an M,
an N and an SM count, the grid and how many rows each CTA takes. Facts of code, not timings.
"""

from __future__ import annotations

RULE_N = (1000, 1024, 2048, 4096, 4097, 6144, 8192, 12288, 16384, 20000, 24576)


def rule_table(lengths: tuple[int, ...] = RULE_N) -> str:
    """A Markdown table of the default config's rule at each N (M = 32768)."""
    from mla_var3.kernel.cute_python.reduction.rmsnorm.v3.plan import RmsNormV3Plan
    from mla_var3.kernel.cute_python.reduction.rmsnorm.v3.tiling import staged_rows
    from mla_var3.kernel.errors import UnsupportedShapeError

    plan = RmsNormV3Plan()
    budget, layout = plan.default_config()["smem_budget"], plan.default_config()["layout"]
    rows = [
        "| N | threads / row | rows / stage | stage | stages | x in flight per CTA (at most) | x vectors / thread "
        "| CTAs per SM (threads each) | grid |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n in lengths:
        try:
            plan.check_shape({"m": 32768, "n": n})
        except UnsupportedShapeError as error:
            rows.append(f"| {n} | refused: {str(error).split(';')[0]} | | | | | | | |")
            continue
        r = staged_rows(n, budget, layout)
        in_flight = (r.stages - 1) * r.stage_bytes
        grid = "scheduled: a CTA per ring of blocks" if r.scheduled else "persistent: one CTA per slot"
        rows.append(
            f"| {n} | {r.threads_per_row} | {r.rows_per_stage} | {r.stage_bytes / 1024:.4g} KiB | {r.stages} | "
            f"{in_flight / 1024:.4g} KiB | {r.vectors_per_thread} | {r.ctas_per_sm} ({r.threads}) | {grid} |"
        )
    return "\n".join(rows)


def row_ranges(m: int, n: int, sm_count: int) -> str:
    """How many rows each CTA of the default config's grid takes for ``m`` rows of ``n`` on ``sm_count`` SMs."""
    from mla_var3.kernel.cute_python.reduction.rmsnorm.v3.plan import RmsNormV3Plan
    from mla_var3.kernel.cute_python.reduction.rmsnorm.v3.tiling import staged_rows

    config = RmsNormV3Plan().default_config()
    ctas = staged_rows(n, config["smem_budget"], config["layout"]).ctas(m, sm_count)
    share, extra = divmod(m, ctas)
    if extra == 0:
        return f"{ctas} CTAs of {share} row{'s' if share > 1 else ''} each"
    return f"{ctas} CTAs: {extra} of {share + 1} rows, {ctas - extra} of {share}"


__all__ = ["RULE_N", "row_ranges", "rule_table"]
