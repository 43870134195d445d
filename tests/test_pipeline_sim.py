"""The pipeline simulator (snippets/cpu/pipeline_sim.py) the pipeline, debugging and wrong-tx-count pages run:
a healthy ring finishes with every tile landed before it is read; a full barrier armed for more bytes than
land hangs at once; armed for fewer, its phases complete before their tiles land and the surplus carries
into the next phase as a negative tx-count (the PTX rules: a phase transition re-arms only the arrivals)."""

from __future__ import annotations

from snippets.cpu.pipeline_sim import SHORT_TX, MBarrier, Setup, hang_report, short_tx_report, simulate


def test_a_healthy_ring_reads_every_tile_after_it_landed() -> None:
    run = simulate(Setup())
    assert run.deadlock is None and run.early == [] and run.completions == []
    assert sum(1 for sp in run.spans if sp.kind == "mma") == Setup().k_tiles
    two_copies = simulate(Setup(copies=2))  # A and B as two copies, armed for both: still healthy
    assert two_copies.deadlock is None and two_copies.completions == []


def test_a_barrier_that_expects_more_bytes_than_land_hangs_at_the_first_stage() -> None:
    run = simulate(Setup(loaded_bytes=16384))
    assert run.deadlock is not None and run.completions == []
    assert "consumer waits on full[0] for phase 0" in run.deadlock and "16384 transaction byte(s)" in run.deadlock
    assert "16384 transaction byte(s)" in hang_report("tx")


def test_a_barrier_that_expects_fewer_bytes_completes_before_the_tile_lands() -> None:
    run = simulate(SHORT_TX)
    first = run.completions[0]
    assert (first.k, first.stage, first.landed_bytes, first.tile_bytes) == (0, 0, 16384, 32768)
    assert first in run.early  # the consumer was waiting: it reads tile 0 with half of it landed
    # The surplus of each copy carries over: the next phase on a stage completes when it is armed, with nothing landed.
    assert [(c.k, c.landed_bytes) for c in run.completions[3:6]] == [(3, 0), (4, 0), (5, 0)]
    # ... and the deficit grows until a phase can never reach zero: a hang, with a negative tx-count.
    assert run.deadlock is not None and "-49152 transaction byte(s)" in run.deadlock
    short = simulate(Setup(copies=2, stage_bytes=16384, loaded_bytes=32768, k_tiles=5))
    assert short.deadlock is None and len(short.completions) == 5  # finishes: every tile read short, nothing said
    assert "nothing reports the tiles read early" in short_tx_report(Setup(copies=2, stage_bytes=16384, loaded_bytes=32768, k_tiles=5))


def test_the_mbarrier_model_keeps_a_negative_tx_count_across_a_phase() -> None:
    bar = MBarrier("b", arrivals=1)
    bar.arrive(expect_tx=100)
    bar.complete_tx(60)
    assert bar.phase == 0
    bar.complete_tx(40)
    assert bar.phase == 1  # arrivals and tx-count both zero
    bar.complete_tx(40)  # a late copy's bytes: tracked by the *next* phase
    assert bar.tx_bytes == -40 and bar.phase == 1
    bar.arrive(expect_tx=40)
    assert bar.phase == 0  # completes on arming, before any of its own bytes
