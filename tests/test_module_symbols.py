"""What the compiled module shows the dynamic loader: its init function only.

CPython looks up one symbol of an extension module, ``PyInit__core``. Any
other symbol the module exports can be bound by the loader to another
library of the process: the C++ standard library's process-wide unique
(``STB_GNU_UNIQUE``) objects, such as the facet ids of ``std::locale``, are
shared by every copy of libstdc++ in the process even across ``RTLD_LOCAL``
loads. A toolchain that links libstdc++ statically (one that ships
``libstdc++.a`` without ``libstdc++.so``) put a whole copy into the module;
numpy, loaded during the module's init, brings the system's
``libstdc++.so.6``, of another GCC release, and the import segfaulted in
``std::ostream`` (GCC 13's ``libstdc++.a`` under Ubuntu 24.04, Python
3.12). The module's version script (cpp/bindings/exports.map) keeps every
symbol but the init function local.

What is asserted:

- The module this interpreter imports exports exactly ``PyInit__core``.
- (slow) A build that links libstdc++ statically, the toolchain of the
  crash, exports exactly that too, imports beside numpy and computes the
  same run bit for bit as the module of this interpreter.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import acesim as ace
import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="ELF symbol tables: Linux only"
)


def defined_dynamic_symbols(module: Path) -> set[str]:
    """The names the module defines in its dynamic symbol table (``nm -D``)."""
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) is not installed")
    out = subprocess.run(
        [nm, "-D", "--defined-only", str(module)], check=True, capture_output=True, text=True
    )
    return {line.split()[-1] for line in out.stdout.splitlines() if line.strip()}


def needed_libraries(module: Path) -> list[str]:
    """The shared libraries the module names as NEEDED (``readelf -d``)."""
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) is not installed")
    out = subprocess.run(
        [readelf, "-d", str(module)], check=True, capture_output=True, text=True
    ).stdout
    return [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def test_core_exports_only_its_init_function() -> None:
    module = Path(ace._core.__file__)
    assert defined_dynamic_symbols(module) == {"PyInit__core"}


RUN = """
import sys
sys.path.insert(0, sys.argv[1])
import acesim as a  # loads _core first, numpy during its init, as where it crashed
assert a._core.__file__.startswith(sys.argv[1]), a._core.__file__
res = a.simulate(a.Job(8, work=3600.0, checkpoint_interval=600.0), a.Exponential(36000.0),
                 replicas=2, seed=1)
print(" ".join(float(w).hex() for w in res.jobs["wall"]))
"""


@pytest.mark.slow  # a second build of the whole core: run by .ci/slow
def test_static_libstdcxx_build_imports_beside_numpy(tmp_path: Path) -> None:
    pybind11 = pytest.importorskip("pybind11")
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not installed")
    build = tmp_path / "build"
    configure = [
        cmake,
        "-S",
        str(ROOT),
        "-B",
        str(build),
        f"-DPython_EXECUTABLE={sys.executable}",
        f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
        "-DACESIM_CUDA=OFF",
        "-DCMAKE_BUILD_TYPE=Release",
        "-DCMAKE_MODULE_LINKER_FLAGS=-static-libstdc++",
    ]
    if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    subprocess.run(configure, check=True, capture_output=True)
    subprocess.run(
        [cmake, "--build", str(build), "-j", str(os.cpu_count() or 2)],
        check=True,
        capture_output=True,
    )
    (module,) = build.glob("_core*.so")
    if any(name.startswith("libstdc++") for name in needed_libraries(module)):
        pytest.skip("this toolchain links libstdc++ dynamically even with -static-libstdc++")
    assert defined_dynamic_symbols(module) == {"PyInit__core"}
    package = tmp_path / "pkg" / "acesim"
    shutil.copytree(
        ROOT / "python" / "acesim",
        package,
        ignore=shutil.ignore_patterns("_core*.so", "__pycache__"),
    )
    shutil.copy(module, package)
    out = subprocess.run(
        [sys.executable, "-c", RUN, str(package.parent)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-3000:]
    res = ace.simulate(
        ace.Job(8, work=3600.0, checkpoint_interval=600.0),
        ace.Exponential(36000.0),
        replicas=2,
        seed=1,
    )
    assert out.stdout.split() == [float(w).hex() for w in res.jobs["wall"]]
