"""What GPU (if any) this process sees: name, compute capability, UUID, driver and CUDA versions."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class GpuInfo:
    name: str
    cc: tuple[int, int]
    uuid: str
    sm_count: int
    l2_bytes: int
    driver: str | None
    cuda: str | None
    torch: str

    @property
    def slug(self) -> str:
        """``nvidia-h200`` for ``NVIDIA H200``: the device part of an evidence path."""
        words = self.name.lower().replace("nvidia ", "").split()
        return "nvidia-" + "-".join(w for w in words if w.isalnum())

    def to_dict(self) -> dict:
        """Plain JSON types only: torch's ``__version__`` is a ``str`` subclass (``TorchVersion``),
        which the evidence model's strict parse refuses when the dict is not sent through JSON."""
        plain = {k: str(v) if isinstance(v, str) else v for k, v in asdict(self).items()}
        return plain | {"cc": f"{self.cc[0]}.{self.cc[1]}", "slug": self.slug}


def detect_gpu() -> GpuInfo | None:
    """The current CUDA device, or None without a driver or GPU (never raises for that)."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return GpuInfo(
        name=props.name,
        cc=(props.major, props.minor),
        uuid=str(getattr(props, "uuid", "")),
        sm_count=props.multi_processor_count,
        l2_bytes=int(getattr(props, "L2_cache_size", 0)),
        driver=_driver_version(),
        cuda=torch.version.cuda,
        torch=str(torch.__version__),
    )


def _driver_version() -> str | None:
    import subprocess

    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out or None
