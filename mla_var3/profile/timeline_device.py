"""CuTe DSL device helpers that record a kernel's timeline (see :mod:`mla_var3.profile.timeline`).

Inside a ``@cute.kernel``, a role's recording thread brackets an event::

    t0 = timeline_begin(layout)
    ...  # e.g. wait on the stage's full barrier
    timeline_end(buf, layout, "mma0", "full_wait", k_tile, t0)

``layout`` is a :class:`~mla_var3.profile.timeline.TimelineLayout` passed to the kernel as a
``cutlass.Constexpr``, or ``None``: then ``timeline_begin`` is the constant 0 and
``timeline_end`` emits nothing, so a kernel compiled without profiling carries no clock read
and no store. ``buf`` is the ``int64`` tensor of ``layout.words`` elements (zeroed before the
launch). Call ``timeline_end`` from one thread of the role (e.g. lane 0 of its first warp):
each call writes the slot of (CTA, role, event, ``seq``). CTAs past ``layout.ctas`` and
``seq`` past ``layout.capacity`` are not recorded.

Caveat: ``clock64`` reads are not ordering points; the compiler may move independent
instructions across them. Bracket work whose completion the thread itself observes (a
barrier wait returning, an MMA wait, a store issued) and read the spans at that resolution.
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute

from mla_var3.profile.errors import ProfileError
from mla_var3.profile.timeline import TimelineLayout


def _ids(layout: TimelineLayout, role: str, event: str) -> tuple[int, int]:
    """The role's index and the event's id (from 1), checked at compile time."""
    if role not in layout.roles or event not in layout.events:
        raise ProfileError(f"timeline: role {role!r} / event {event!r} not in layout {layout.roles} / {layout.events}")
    return layout.roles.index(role), layout.events.index(event) + 1


# --8<-- [start:device_helpers]
@cute.jit
def timeline_begin(layout: cutlass.Constexpr) -> cutlass.Int64:
    """The SM clock now (cycles), or 0 when profiling is compiled out (``layout`` is None)."""
    if cutlass.const_expr(layout is None):
        return cutlass.Int64(0)
    return cute.arch.clock64()


@cute.jit
def timeline_end(
    buf: cute.Tensor,
    layout: cutlass.Constexpr,
    role: cutlass.Constexpr,
    event: cutlass.Constexpr,
    seq: cutlass.Int32,
    start: cutlass.Int64,
):
    """Write the record ``(event id, start, now)`` of ``role`` at step ``seq`` of this CTA."""
    if cutlass.const_expr(layout is not None):
        end = cute.arch.clock64()
        bx, by, bz = cute.arch.block_idx()
        gx, gy, _ = cute.arch.grid_dim()
        cta = bx + gx * (by + gy * bz)
        role_id, event_id = _ids(layout, role, event)
        if cta < layout.ctas and seq < layout.capacity:
            at = layout.offset(cta, role_id, event_id - 1, seq)
            buf[at] = cutlass.Int64(event_id)
            buf[at + 1] = start
            buf[at + 2] = end


# --8<-- [end:device_helpers]
