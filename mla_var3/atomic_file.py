"""One way to write a file that a concurrent reader sees whole or not at all.

Records, tool outputs and other files that several processes (xdist workers, GPU lanes, a site
build) read while another writes go through :func:`write_atomic`: a temporary file in the same
folder, flushed to disk, then renamed over the target.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` so a reader sees the old file or the new
    one, never half of one; on failure the old file stays and no temporary is left."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(data, str):
                data = data.encode("utf-8")
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
