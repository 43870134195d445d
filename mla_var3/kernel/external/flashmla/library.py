"""Load ``libflashmla_sm90.so`` with ctypes and call its C ABI (:file:`capi.cu`) on torch tensors.

The library carries its own CUDA runtime (static) and takes raw device pointers and the
caller's stream, so it runs beside any torch build in the same process. :class:`FlashMla`
allocates nothing per launch: :meth:`FlashMla.schedule` computes FlashMLA's tile-scheduler
metadata once for a batch's sequence lengths (as its ``get_mla_metadata`` does) and the
:class:`Schedule` it returns -- metadata, split counts and the fp32 split workspace -- is reused
by every :meth:`FlashMla.decode` with those lengths.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from mla_var3.kernel.errors import UserError
from mla_var3.kernel.external.flashmla.build import (
    ABI_VERSION,
    FLASHMLA_COMMIT,
    LIBRARY,
    MANIFEST,
    OUT_DIR,
    Manifest,
)

LIBRARY_ENV = "FLASHMLA_LIB"
BUILD_COMMAND = "python -m mla_var3.kernel.external.flashmla.build (nox -s flashmla), then carry third_party/flashmla"
PAGE_SIZE = 64  # FlashMLA's SM90 dense decode supports this page size only
D_QK, D_V = 576, 512


class FlashMlaError(UserError):
    """FlashMLA is not built here, or rejected a call."""


class _DecodeArgs(ctypes.Structure):
    """``FlashMlaDecodeArgs`` of capi.cu, field for field."""

    _fields_ = [
        *[(name, ctypes.c_int) for name in ("b", "s_q", "h_q", "d_qk", "d_v", "num_blocks", "page_block_size",
                                           "max_blocks_per_seq", "is_causal", "is_fp16")],
        ("softmax_scale", ctypes.c_float),
        ("num_sm_parts", ctypes.c_int),
        *[(name, ctypes.c_void_p) for name in ("q", "kcache", "block_table", "seqlens_k", "out", "lse", "sched_meta",
                                              "num_splits", "lse_accum", "o_accum", "stream")],
    ]


def library_path() -> Path:
    configured = os.environ.get(LIBRARY_ENV)
    return Path(configured) if configured else OUT_DIR / LIBRARY


def unavailable_reason() -> str | None:
    """Why the library cannot be loaded here (one line), or ``None`` when it can."""
    path = library_path()
    if not path.exists():
        return f"FlashMLA SM90 is not built ({path} is missing): {BUILD_COMMAND}"
    manifest_path = path.with_name(MANIFEST)
    if not manifest_path.exists():
        return f"FlashMLA SM90 at {path} has no {MANIFEST}: rebuild it with {BUILD_COMMAND}"
    manifest = Manifest.read(manifest_path)
    if manifest.abi_version != ABI_VERSION or manifest.flashmla_commit != FLASHMLA_COMMIT:
        return (f"FlashMLA SM90 at {path} was built for ABI {manifest.abi_version} at {manifest.flashmla_commit[:12]}, "
                f"this code wants ABI {ABI_VERSION} at {FLASHMLA_COMMIT[:12]}: rebuild with --force")
    return None


@dataclass
class Schedule:
    """FlashMLA's scheduler output for one batch of sequence lengths, plus the split workspace."""

    num_sm_parts: int
    sched_meta: Any  # int32 [num_sm_parts, sched_meta_ints]
    num_splits: Any  # int32 [b + 1]
    lse_accum: Any  # fp32 [b + num_sm_parts, s_q * h_q]
    o_accum: Any  # fp32 [b + num_sm_parts, s_q * h_q, d_v]


class FlashMla:
    """The loaded library: ``schedule`` once per batch of lengths, then ``decode`` per launch."""

    def __init__(self, path: Path) -> None:
        self.path = path
        lib = ctypes.CDLL(str(path))
        lib.flashmla_last_error.restype = ctypes.c_char_p
        lib.flashmla_num_sm_parts.argtypes = [ctypes.c_int] * 3
        lib.flashmla_get_sched_meta.argtypes = [ctypes.c_int, ctypes.c_int, *[ctypes.c_void_p] * 3, ctypes.c_int, ctypes.c_void_p]
        lib.flashmla_dense_decode.argtypes = [ctypes.POINTER(_DecodeArgs)]
        if lib.flashmla_abi_version() != ABI_VERSION:
            raise FlashMlaError(f"{path} has ABI {lib.flashmla_abi_version()}, expected {ABI_VERSION}: rebuild with --force")
        self._lib = lib

    def _check(self, code: int, what: str) -> None:
        if code != 0:
            raise FlashMlaError(f"FlashMLA {what}: {self._lib.flashmla_last_error().decode()}")

    def schedule(self, seqlens_k: Any, s_q: int, h_q: int) -> Schedule:
        """Scheduler metadata and split workspace for ``seqlens_k`` (int32 [b], on the GPU)."""
        import torch

        device = seqlens_k.device
        b = seqlens_k.numel()
        num_sms = torch.cuda.get_device_properties(device).multi_processor_count
        parts = self._lib.flashmla_num_sm_parts(num_sms, s_q, h_q)
        ints = self._lib.flashmla_sched_meta_ints()
        sched_meta = torch.empty((parts, ints), dtype=torch.int32, device=device)
        num_splits = torch.empty((b + 1,), dtype=torch.int32, device=device)
        stream = torch.cuda.current_stream(device).cuda_stream
        self._check(self._lib.flashmla_get_sched_meta(b, s_q, seqlens_k.data_ptr(), sched_meta.data_ptr(),
                                                      num_splits.data_ptr(), parts, stream), "scheduler")
        lse_accum = torch.empty((b + parts, s_q * h_q), dtype=torch.float32, device=device)
        o_accum = torch.empty((b + parts, s_q * h_q, D_V), dtype=torch.float32, device=device)
        return Schedule(parts, sched_meta, num_splits, lse_accum, o_accum)

    def decode_args(self, q: Any, kcache: Any, block_table: Any, seqlens_k: Any, out: Any, lse: Any,
                    schedule: Schedule, softmax_scale: float, causal: bool) -> _DecodeArgs:
        """The argument struct for one decode (built once; :meth:`launch` reuses it). It keeps the
        tensors and the schedule alive: a freed workspace would be reused by the caching allocator.

        ``q`` [b, s_q, h_q, 576], ``kcache`` [pages, 64, 576] (or [pages, 64, 1, 576]),
        ``block_table`` int32 [b, max_pages], ``seqlens_k`` int32 [b], ``out`` [b, s_q, h_q, 512]
        (q's dtype), ``lse`` fp32 [b, s_q, h_q]; all contiguous.
        """
        import torch

        for name, t in (("q", q), ("kcache", kcache), ("block_table", block_table), ("seqlens_k", seqlens_k),
                        ("out", out), ("lse", lse)):
            if not t.is_contiguous():
                raise FlashMlaError(f"FlashMLA needs a contiguous {name}")
        b, s_q, h_q, d_qk = q.shape
        if kcache.shape[1] != PAGE_SIZE:
            raise FlashMlaError(f"FlashMLA's SM90 decode takes page size {PAGE_SIZE} only, got {kcache.shape[1]}")
        if q.dtype not in (torch.bfloat16, torch.float16) or kcache.dtype != q.dtype or out.dtype != q.dtype:
            raise FlashMlaError(f"FlashMLA takes bf16 or fp16 q, kcache and out of one dtype, got {q.dtype}")
        args = _DecodeArgs(
            b=b, s_q=s_q, h_q=h_q, d_qk=d_qk, d_v=out.shape[-1], num_blocks=kcache.shape[0],
            page_block_size=kcache.shape[1], max_blocks_per_seq=block_table.shape[1], is_causal=int(causal),
            is_fp16=int(q.dtype == torch.float16), softmax_scale=softmax_scale, num_sm_parts=schedule.num_sm_parts,
            q=q.data_ptr(), kcache=kcache.data_ptr(), block_table=block_table.data_ptr(),
            seqlens_k=seqlens_k.data_ptr(), out=out.data_ptr(), lse=lse.data_ptr(),
            sched_meta=schedule.sched_meta.data_ptr(), num_splits=schedule.num_splits.data_ptr(),
            lse_accum=schedule.lse_accum.data_ptr(), o_accum=schedule.o_accum.data_ptr(),
            stream=torch.cuda.current_stream(q.device).cuda_stream,
        )
        # The struct holds raw pointers: keep every tensor behind them alive as long as the struct.
        args.tensors = (q, kcache, block_table, seqlens_k, out, lse, schedule)
        return args

    def launch(self, args: _DecodeArgs) -> None:
        """The split-KV kernel then the combine kernel, on the stream recorded in ``args``."""
        self._check(self._lib.flashmla_dense_decode(ctypes.byref(args)), "decode")


@cache
def load() -> FlashMla:
    """The library, loaded once per process; :class:`FlashMlaError` with the build command if it is not built."""
    reason = unavailable_reason()
    if reason:
        raise FlashMlaError(reason)
    return FlashMla(library_path())
