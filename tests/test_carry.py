"""The GPU carry (tools/device): bootstrap.sh unpacks what carry.sh packed, and carry.sh's prune
list drops nothing the installed CuTe DSL (or tvm-ffi) loads.

carry.sh itself downloads wheels and repacks the DSL for minutes, so it is exercised by hand
(docs/contributing/refresh-evidence.md); these tests check its argument errors, the bootstrap on a
fake carry folder, and the prune list against the DSL installed in this environment.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from mla_var3.project import REPO_ROOT

DEVICE = REPO_ROOT / "tools" / "device"


def _prune_list() -> list[str]:
    """The paths in carry.sh's `prune=( ... )` array."""
    text = (DEVICE / "carry.sh").read_text()
    match = re.search(r"^prune=\(\n(.*?)^\)", text, re.MULTILINE | re.DOTALL)
    assert match, "carry.sh has no prune=( ... ) block"
    return [line.strip() for line in match.group(1).splitlines() if line.strip()]


def _tar_xz(path: Path, files: dict[str, str]) -> None:
    staging = path.parent / (path.name + ".d")
    for name, text in files.items():
        (staging / name).parent.mkdir(parents=True, exist_ok=True)
        (staging / name).write_text(text)
    with tarfile.open(path, "w:xz") as archive:
        for child in sorted(staging.iterdir()):
            archive.add(child, arcname=child.name)
    shutil.rmtree(staging)


@pytest.mark.parametrize(
    ("args", "message"),
    [(["nope"], "unknown argument 'nope'"), (["--out", "a/b"], "--out must be a folder name")],
)
def test_carry_rejects_bad_arguments(args: list[str], message: str) -> None:
    run = subprocess.run(["bash", str(DEVICE / "carry.sh"), *args], cwd=REPO_ROOT, capture_output=True,
                         text=True, check=False)
    assert run.returncode == 2
    assert message in run.stderr


def test_bootstrap_unpacks_every_site_archive_and_the_payload(tmp_path: Path) -> None:
    """The site archives land in one /tmp site on PYTHONPATH (the DSL's dsl_packages too), the
    payload at its repository path, and the command runs from the repository root."""
    dev = tmp_path / "repo" / ".device"
    dev.mkdir(parents=True)
    shutil.copy(DEVICE / "bootstrap.sh", dev / "bootstrap.sh")
    marker = f"carry-test-{os.getpid()}"
    _tar_xz(dev / "site.tar.xz", {"nvidia_cutlass_dsl/dsl_packages/fake_dsl/__init__.py": f"NAME = '{marker}'\n"})
    _tar_xz(dev / "site-py.tar.xz", {"fake_peer/__init__.py": "VALUE = 7\n"})
    _tar_xz(dev / "payload.tar.xz", {"build/peer/lib.txt": "restored\n"})
    (dev / "cutlass").mkdir()
    code = ("import os, fake_dsl, fake_peer; print(fake_dsl.NAME, fake_peer.VALUE, os.getcwd(), "
            "os.environ['CUTLASS_DIR'], open('build/peer/lib.txt').read().strip())")
    run = subprocess.run(["bash", str(dev / "bootstrap.sh"), "python3", "-c", code],
                         capture_output=True, text=True, check=False, env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr
    name, value, cwd, cutlass_dir, payload = run.stdout.split()
    assert (name, value, payload) == (marker, "7", "restored")
    assert Path(cwd) == dev.parent and Path(cutlass_dir) == dev / "cutlass"
    site = next(Path("/tmp").glob("mla_var3-site-*/nvidia_cutlass_dsl/dsl_packages/fake_dsl")).parents[2]
    shutil.rmtree(site)
    Path(f"{site}.lock").unlink(missing_ok=True)


def _installed_roots() -> list[Path]:
    """The folders of the CuTe DSL (nvidia_cutlass_dsl) and tvm-ffi installed here."""
    spec = importlib.util.find_spec("cutlass")
    if spec is None or spec.origin is None:
        pytest.skip("the CuTe DSL is not installed here")
    roots = [Path(spec.origin).parents[2]]
    tvm = importlib.util.find_spec("tvm_ffi")
    if tvm is not None and tvm.origin is not None:
        roots.append(Path(tvm.origin).parent)
    return roots


def _pruned(path: Path, site: Path, pruned: list[str]) -> bool:
    rel = path.relative_to(site).as_posix()
    return any(rel == p or rel.startswith(p + "/") for p in pruned)


def test_prune_list_keeps_the_runtime() -> None:
    pruned = _prune_list()
    assert pruned, "carry.sh prunes nothing"
    kept = ["nvidia_cutlass_dsl/cu13/lib/libcute_dsl_runtime.so", "nvidia_cutlass_dsl/dsl_packages/cutlass",
            "tvm_ffi/lib/libtvm_ffi.so", "tvm_ffi/lib/libtvm_ffi_testing.so", "tvm_ffi/include"]
    for path in kept:
        assert not any(path == p or path.startswith(p + "/") for p in pruned), f"carry.sh prunes {path}"


def test_no_kept_file_loads_a_pruned_one() -> None:
    """In the DSL and tvm-ffi installed here: no kept shared library links (NEEDED) a pruned one,
    and no kept Python file imports the pruned `iket` package or names the pruned AOT stubs."""
    if shutil.which("readelf") is None:
        pytest.skip("readelf is not installed")
    pruned = _prune_list()
    hits: list[str] = []
    for root in _installed_roots():
        site = root.parent
        libs = [p for p in root.rglob("*.so*") if p.is_file()]
        gone = {p.name for p in libs if _pruned(p, site, pruned)}
        for lib in libs:
            if _pruned(lib, site, pruned):
                continue
            dynamic = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True, check=True).stdout
            hits += [f"{lib} needs {name}" for name in re.findall(r"\(NEEDED\).*\[(.*)\]", dynamic) if name in gone]
        loads = re.compile(r"^\s*(from\s+iket[\s.]|import\s+iket\b)|lib/stubs", re.MULTILINE)
        hits += [f"{py}: {m.group(0).strip()}" for py in root.rglob("*.py") if not _pruned(py, site, pruned)
                 for m in loads.finditer(py.read_text(errors="replace"))]
    assert not hits, "a kept file loads a pruned one:\n" + "\n".join(hits)
