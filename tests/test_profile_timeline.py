"""In-kernel timeline: decoding, TMA-overlap arithmetic on a hand-made case, the SVG, and the
device helpers compiled (sm_90a, CPU) and run (GPU) inside a tiny two-role kernel."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from mla_var3.profile.errors import ProfileError
from mla_var3.profile.timeline import (
    Span,
    Timeline,
    TimelineLayout,
    decode_timeline,
    render_timeline_svg,
    timeline_from_svg,
    tma_overlap,
)

LAYOUT = TimelineLayout(roles=("producer", "mma"), events=("tma_issue", "full_wait", "mma"), ctas=2, capacity=4)


def _buffer(records: list[tuple[int, int, int, int, int, int]], stored_id: int | None = None) -> list[int]:
    """(cta, role, event, seq, start, end) records (positions in the layout) in a zeroed buffer."""
    buf = [0] * LAYOUT.words
    for cta, role, event, seq, start, end in records:
        at = LAYOUT.offset(cta, role, event, seq)
        buf[at : at + 3] = [stored_id or event + 1, start, end]
    return buf


def test_decode_reads_records_and_skips_empty_slots() -> None:
    spans = decode_timeline(_buffer([(1, 1, 2, 3, 500, 900), (0, 0, 0, 0, 100, 110)]), LAYOUT)
    assert spans == [Span(0, "producer", "tma_issue", 0, 100, 110), Span(1, "mma", "mma", 3, 500, 900)]
    assert spans[1].cycles == 400


def test_two_events_of_one_role_at_one_step_are_both_kept() -> None:
    spans = decode_timeline(_buffer([(0, 1, 1, 2, 10, 20), (0, 1, 2, 2, 20, 50)]), LAYOUT)
    assert [(s.event, s.seq) for s in spans] == [("full_wait", 2), ("mma", 2)]


def test_decode_accepts_nested_arrays() -> None:
    import numpy as np

    array = np.array(_buffer([(0, 1, 1, 2, 5, 9)]), dtype=np.int64).reshape(2, 2, 3, 4, 3)
    assert decode_timeline(array, LAYOUT) == [Span(0, "mma", "full_wait", 2, 5, 9)]


@pytest.mark.parametrize(
    ("buffer", "message"),
    [
        ([0] * 10, "has 10 words; the layout needs 144"),
        (_buffer([(0, 0, 0, 0, 1, 2)], stored_id=2), "buffer and layout disagree"),
        (_buffer([(0, 0, 0, 0, 9, 2)]), "buffer and layout disagree"),
    ],
)
def test_decode_rejects_a_buffer_that_does_not_fit(buffer: list[int], message: str) -> None:
    with pytest.raises(ProfileError, match=message):
        decode_timeline(buffer, LAYOUT)


def test_layout_checks_names() -> None:
    with pytest.raises(ProfileError, match="unique"):
        TimelineLayout(roles=("a", "a"), events=("x",))


# Three stages in one CTA. Loads in flight: seq 0 [0, 100), seq 1 [20, 210), seq 2 [40, 312)
# -> [0, 312). MMA: [100, 200) + [210, 310) + [312, 412) = 300 cycles, of which 200 overlap
# loads in flight. Consumer: full waits 95 + 10 + 2 = 107 of its 407 cycles (5 -> 412).
HAND = [
    Span(0, "producer", "tma_issue", 0, 0, 10),
    Span(0, "producer", "tma_issue", 1, 20, 30),
    Span(0, "producer", "tma_issue", 2, 40, 50),
    Span(0, "mma", "full_wait", 0, 5, 100),
    Span(0, "mma", "mma", 0, 100, 200),
    Span(0, "mma", "full_wait", 1, 200, 210),
    Span(0, "mma", "mma", 1, 210, 310),
    Span(0, "mma", "full_wait", 2, 310, 312),
    Span(0, "mma", "mma", 2, 312, 412),
]


def test_overlap_on_a_hand_made_case() -> None:
    result = tma_overlap(HAND)
    assert (result.ctas, result.mma_cycles, result.mma_cycles_with_loads_in_flight) == (1, 300, 200)
    assert result.overlap_fraction == pytest.approx(2 / 3)
    assert (result.full_wait_cycles, result.consumer_cycles) == (107, 407)
    assert result.full_wait_fraction == pytest.approx(107 / 407)
    assert result.empty_wait_fraction == 0.0
    assert result.to_dict()["overlap_fraction"] == pytest.approx(2 / 3)


def test_overlap_sums_ctas_and_pairs_loads_with_the_earliest_consumer() -> None:
    second_cta = [Span(1, s.role, s.event, s.seq, s.start + 7, s.end + 7) for s in HAND]
    both = tma_overlap(HAND + second_cta)
    assert (both.ctas, both.mma_cycles, both.mma_cycles_with_loads_in_flight) == (2, 600, 400)
    # A second consumer sees stage 2 full only at cycle 400; the load was complete by 312,
    # when "mma" saw it, so MMA [312, 412) still counts as not overlapped (else 88 would).
    late_consumer = [Span(0, "mma1", "full_wait", 2, 5, 400)]
    with_late = tma_overlap(HAND + late_consumer)
    assert (with_late.mma_cycles, with_late.mma_cycles_with_loads_in_flight) == (300, 200)
    assert (with_late.full_wait_cycles, with_late.consumer_cycles) == (107 + 395, 407 + 395)


def test_svg_has_one_lane_per_role_per_cta() -> None:
    spans = HAND + [Span(c, s.role, s.event, s.seq, s.start, s.end) for c in (1, 2, 3, 4, 5) for s in HAND]
    svg = render_timeline_svg(spans, layout=LAYOUT, max_ctas=3)
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert svg.count('class="lane"') == 6
    labels = re.findall(r">CTA (\d) · (\w+)<", svg)
    assert labels == [(str(c), r) for c in range(3) for r in ("producer", "mma")]
    assert svg.count('class="span"') == 3 * len(HAND)
    assert "loads in flight during 66.7 % of MMA time" in svg
    assert svg == render_timeline_svg(spans, layout=LAYOUT, max_ctas=3)


def test_svg_escapes_names_and_colors_unknown_events() -> None:
    svg = render_timeline_svg([Span(0, "<warp&0>", "softmax<1>", 0, 0, 5)])
    assert "&lt;warp&amp;0&gt;" in svg and "<warp" not in svg
    assert "overlap over 1 CTAs: loads in flight during n/a" in svg
    assert ">CTA 0 · &lt;warp&amp;0&gt;<" in svg


def test_a_record_keeps_spans_and_draws_the_same_picture_from_them() -> None:
    spans = HAND + [Span(1, s.role, s.event, s.seq, s.start + 1000, s.end + 1000) for s in HAND]
    kept = Timeline.of(spans, LAYOUT, "hand <case> & more")
    assert set(kept.span_list()) == set(spans)
    assert kept.overlap == tma_overlap(spans)
    svg = kept.svg(max_ctas=2)
    assert svg == render_timeline_svg(kept.span_list(), layout=LAYOUT, overlap=kept.overlap, max_ctas=2, title="hand <case> & more")
    # A picture stored by older results reads back into the same spans, counted from each CTA's first one.
    back = timeline_from_svg(svg)
    assert back.title == "hand <case> & more" and back.roles == LAYOUT.roles and back.events == LAYOUT.events
    assert back.overlap == kept.overlap and back.svg(max_ctas=2) == svg
    with pytest.raises(ProfileError, match="not a picture drawn by render_timeline_svg"):
        timeline_from_svg("<svg></svg>")


# --- the device helpers inside a real (tiny) kernel ---------------------------------------

KERNEL = Path(__file__).parent / "fixtures" / "profile" / "timeline_kernel.py"


def _tiny_kernel():  # noqa: ANN202 - the module's DSL host function
    """The two-role kernel of ``timeline_kernel.py`` (a file: the DSL needs kernel source on disk)."""
    spec = importlib.util.spec_from_file_location("timeline_kernel", KERNEL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_device_helpers_compile_for_sm90a_and_vanish_when_disabled() -> None:
    import cuda.bindings.driver as cuda
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor

    host = _tiny_kernel().host
    buf = make_fake_compact_tensor(cutlass.Int64, (LAYOUT.words,), assumed_align=16)
    ptx = {}
    for name, layout in (("on", LAYOUT), ("off", None)):
        compiled = cute.compile(host, buf, layout, cuda.CUstream(0), options="--gpu-arch sm_90a --keep-ptx")
        ptx[name] = compiled.artifacts.PTX
    assert ".target sm_90a" in ptx["on"]
    assert len(re.findall(r"%clock64", ptx["on"])) >= 5
    assert len(re.findall(r"st\.global\.(?:b|u|s)64", ptx["on"])) >= 9
    assert "%clock64" not in ptx["off"] and "st.global" not in ptx["off"]
    # Each event's id is stored at its own slot (a shared slot would overwrite one event).
    id_stores = re.findall(r"st\.global\.b64\s+(\[[^\]]+\]),\s*[123];", ptx["on"])
    assert len(id_stores) >= 3 and len(set(id_stores)) == len(id_stores), id_stores


def test_an_unknown_role_fails_at_compile_time() -> None:
    import cuda.bindings.driver as cuda
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor

    buf = make_fake_compact_tensor(cutlass.Int64, (LAYOUT.words,), assumed_align=16)
    with pytest.raises(ProfileError, match="role 'consumer' / event 'mma' not in layout"):
        cute.compile(_tiny_kernel().misnamed_host, buf, LAYOUT, cuda.CUstream(0), options="--gpu-arch sm_90a")


@pytest.mark.gpu
def test_device_helpers_record_a_decodable_timeline() -> None:
    import cuda.bindings.driver as cuda
    import cutlass.cute as cute
    import torch
    from cutlass.cute.runtime import from_dlpack

    kernel = _tiny_kernel()
    buf = torch.zeros(LAYOUT.words, dtype=torch.int64, device="cuda")
    stream = cuda.CUstream(torch.cuda.current_stream().cuda_stream)
    compiled = cute.compile(kernel.host, from_dlpack(buf), LAYOUT, stream)
    compiled(from_dlpack(buf), stream)  # the Constexpr layout is not passed at launch
    torch.cuda.synchronize()
    spans = decode_timeline(buf.cpu(), LAYOUT)
    # 3 CTAs launched, 2 recorded; per CTA 3 issues, 3 waits, 3 MMAs.
    assert sorted({s.cta for s in spans}) == [0, 1]
    assert len(spans) == 2 * 3 * kernel.STAGES
    assert all(s.end >= s.start > 0 for s in spans)
    waits = sorted((s for s in spans if s.cta == 0 and s.event == "full_wait"), key=lambda s: s.seq)
    assert [s.seq for s in waits] == [0, 1, 2] and waits[0].end <= waits[1].start
