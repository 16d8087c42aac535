"""Compiled recovery policies (DESIGN.md section 6): the C ABI of
``acesim_policy.h``, its ctypes mirror, the Cython declarations
(``acesim/policy_abi.pxd``) and :class:`acesim.CompiledPolicy`.

The tests that compile C or Cython need the installed package (the header is
put in ``acesim/include`` by the build): from a source tree on ``PYTHONPATH``
they skip. They also skip without a C compiler, Cython or Numba.
"""

from __future__ import annotations

import copy
import ctypes
import importlib
import os
import pickle
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from types import ModuleType
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim import compiled
from acesim.compiled import CompiledPolicy, FailurePolicyFn, FailureViewStruct

SOURCE_HEADER = Path(__file__).resolve().parents[1] / "cpp" / "include" / "acesim" / "policy_abi.h"
PXD = Path(compiled.__file__).parent / "policy_abi.pxd"
FIELDS = [name for name, _ in FailureViewStruct._fields_]
CONSTANTS = {
    "ACESIM_POLICY_ABI_VERSION": compiled.ABI_VERSION,
    "ACESIM_DEFAULT": compiled.ACESIM_DEFAULT,
    "ACESIM_SPARES": compiled.ACESIM_SPARES,
    "ACESIM_WAIT_REPAIR": compiled.ACESIM_WAIT_REPAIR,
    "ACESIM_PREEMPT_LOWER": compiled.ACESIM_PREEMPT_LOWER,
    "ACESIM_REQUEUE": compiled.ACESIM_REQUEUE,
}
BUILD_TIMEOUT = 180


# ---------------------------------------------------------------- helpers


def include_dir() -> str:
    """``acesim.get_include()``, or skip when the package is not installed."""
    try:
        return ace.get_include()
    except RuntimeError:
        pytest.skip(
            "acesim_policy.h is not installed (source tree on PYTHONPATH?): "
            "run these tests against an installed acesim"
        )


def c_compiler() -> str:
    for name in (os.environ.get("CC", ""), "cc", "gcc", "clang"):
        if name and (path := shutil.which(name.split()[0])):
            return path
    pytest.skip("no C compiler (cc, gcc or clang) on PATH")


def header_text() -> str:
    """The installed header, else the source one (parsed only, never compiled)."""
    try:
        return (Path(ace.get_include()) / compiled.HEADER_NAME).read_text()
    except RuntimeError:
        if not SOURCE_HEADER.is_file():
            pytest.skip("neither an installed nor a source policy_abi.h")
        return SOURCE_HEADER.read_text()


def struct_body(text: str, opener: str, closer: str) -> str:
    start = text.index(opener)
    return text[start : text.index(closer, start)]


def make_view(**values: Any) -> FailureViewStruct:
    view = FailureViewStruct()
    defaults: dict[str, Any] = {
        "time": 1000.0,
        "fault_time": 990.0,
        "progress": 500.0,
        "work": 3600.0,
        "lost_work": 120.0,
        "repair_remaining": 3600.0,
        "replica": 0,
        "job": 0,
        "gpus": 64,
        "priority": 0,
        "failures": 1,
        "cause": -1,
        "nodes_held": 7,
        "nodes_needed": 1,
        "free_nodes": 0,
        "spare_nodes": 2,
        "down_nodes": 1,
        "quarantined_nodes": 0,
        "preemptible_nodes": 0,
    }
    defaults.update(values)
    for name, value in defaults.items():
        setattr(view, name, value)
    return view


# ------------------------------------------------ ctypes mirror and header


def test_ctypes_fields_follow_the_header() -> None:
    body = struct_body(
        header_text(), "typedef struct acesim_failure_view", "} acesim_failure_view;"
    )
    declared = re.findall(r"^\s*(double|u?int32_t)\s+(\w+)\s*;", body, flags=re.MULTILINE)
    assert [name for _, name in declared] == FIELDS
    ctypes_of = {
        "double": ctypes.c_double,
        "uint32_t": ctypes.c_uint32,
        "int32_t": ctypes.c_int32,
    }
    for (ctype, name), (fname, ftype) in zip(declared, FailureViewStruct._fields_, strict=True):
        assert ftype is ctypes_of[ctype], (name, fname)


def test_header_constants_match_the_module() -> None:
    text = header_text()
    for name, value in CONSTANTS.items():
        match = re.search(rf"#define\s+{name}\s+\(?(-?\d+)\)?", text)
        assert match is not None, name
        assert int(match.group(1)) == value, name


def test_pxd_declares_every_field_and_constant() -> None:
    text = PXD.read_text()
    body = struct_body(text, "ctypedef struct acesim_failure_view:", "ctypedef int32_t (*")
    declared = re.findall(r"^\s+(double|u?int32_t)\s+(\w+)\s*$", body, flags=re.MULTILINE)
    header = re.findall(
        r"^\s*(double|u?int32_t)\s+(\w+)\s*;",
        struct_body(header_text(), "typedef struct acesim_failure_view", "} acesim_failure_view;"),
        flags=re.MULTILINE,
    )
    assert declared == header
    for name in CONSTANTS:
        assert re.search(rf"^\s+{name}\b", text, flags=re.MULTILINE), name
    assert 'cdef extern from "acesim_policy.h"' in text
    assert "acesim_failure_policy_fn" in text


def test_installed_header_is_the_source_header() -> None:
    installed = Path(include_dir()) / compiled.HEADER_NAME
    if not SOURCE_HEADER.is_file():
        pytest.skip("no source tree next to these tests")
    assert installed.read_text() == SOURCE_HEADER.read_text(), "stale install: reinstall acesim"


def test_get_include() -> None:
    expected = Path(compiled.__file__).resolve().parent / "include"
    if (expected / compiled.HEADER_NAME).is_file():
        assert ace.get_include() == str(expected)
        assert Path(ace.get_include(), "acesim_policy.h").is_file()
    else:
        with pytest.raises(RuntimeError, match="not installed"):
            ace.get_include()


def test_struct_layout_matches_the_c_compiler(tmp_path: Path) -> None:
    include = include_dir()
    cc = c_compiler()
    lines = ['    printf("sizeof %zu\\n", sizeof(acesim_failure_view));']
    lines.append('    printf("alignof %zu\\n", _Alignof(acesim_failure_view));')
    for name in FIELDS:
        lines.append(
            f'    printf("{name} %zu %zu\\n", offsetof(acesim_failure_view, {name}), '
            f"sizeof(((acesim_failure_view*)0)->{name}));"
        )
    for name in CONSTANTS:
        lines.append(f'    printf("{name} %ld\\n", (long)({name}));')
    source = tmp_path / "layout.c"
    source.write_text(
        "#include <stddef.h>\n#include <stdio.h>\n#include <acesim_policy.h>\n"
        "static int32_t policy(const acesim_failure_view* v, void* u) { (void)u; "
        "return v->spare_nodes >= v->nodes_needed ? ACESIM_SPARES : ACESIM_WAIT_REPAIR; }\n"
        "int main(void) {\n    acesim_failure_policy_fn fn = policy; (void)fn;\n"
        + "\n".join(lines)
        + "\n    return 0;\n}\n"
    )
    exe = tmp_path / "layout"
    flags = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"]
    build = subprocess.run(
        [cc, *flags, "-I", include, str(source), "-o", str(exe)],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
    )
    assert build.returncode == 0, build.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True, timeout=30)
    seen = {line.split()[0]: [int(x) for x in line.split()[1:]] for line in out.stdout.splitlines()}

    assert seen["sizeof"] == [ctypes.sizeof(FailureViewStruct)]
    assert seen["alignof"] == [ctypes.alignment(FailureViewStruct)]
    for name, ftype in FailureViewStruct._fields_:
        assert seen[name] == [getattr(FailureViewStruct, name).offset, ctypes.sizeof(ftype)], name
    for name, value in CONSTANTS.items():
        assert seen[name] == [value], name


def test_numpy_dtype_of_the_mirror() -> None:
    dtype = np.dtype(FailureViewStruct)
    assert dtype.itemsize == ctypes.sizeof(FailureViewStruct)
    assert list(dtype.names or ()) == FIELDS


# ----------------------------------------------------------- CompiledPolicy


def libc_function(name: str) -> int:
    """The address of a libc function (code of a loaded image)."""
    address = ctypes.cast(getattr(ctypes.CDLL(None), name), ctypes.c_void_p).value
    assert address
    return address


def test_compiled_policy_validates_address_and_user_data() -> None:
    code, other = libc_function("abs"), libc_function("labs")
    p = CompiledPolicy(code)
    assert (p.address, p.user_data, p.keepalive) == (code, 0, None)
    assert CompiledPolicy(np.uint64(other), user_data=np.int64(5)) == CompiledPolicy(other, 5)
    assert ace.CompiledPolicy is CompiledPolicy
    for bad in (0, -1, 1 << 64):
        with pytest.raises(ValueError, match="address"):
            CompiledPolicy(bad)
    for bad_type in (1.5, "0x1000", None, True):
        with pytest.raises(TypeError, match="address"):
            CompiledPolicy(bad_type)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="user_data"):
        CompiledPolicy(code, user_data=-1)
    with pytest.raises(TypeError, match="user_data"):
        CompiledPolicy(code, user_data=2.0)  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        p.address = 5  # type: ignore[misc]
    # keepalive does not take part in equality or hashing
    owner = [1, 2]
    assert CompiledPolicy(code, keepalive=owner) == p
    assert hash(CompiledPolicy(code, keepalive=owner)) == hash(p)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc/self/maps")
def test_an_address_outside_code_is_refused() -> None:
    """A data pointer (a Python object, a variable in libc's data), an address
    nothing is mapped at: refused before any call, where calling it would
    crash the process. Code a JIT maps (a ctypes callback's trampoline) passes."""
    libc = ctypes.CDLL(None)
    data_in_image = ctypes.addressof(ctypes.c_void_p.in_dll(libc, "environ"))
    heap = ctypes.addressof(ctypes.c_int(3))
    for address, why in [
        (0x1000, "not in any memory mapped"),
        (id(object()), "without execute permission"),
        (heap, "without execute permission"),
        (data_in_image, "without execute permission"),
    ]:
        with pytest.raises(ValueError, match=f"address {address:#x} is not a function: .*{why}"):
            CompiledPolicy(address)
    trampoline = FailurePolicyFn(lambda view, data: 0)
    assert CompiledPolicy.from_ctypes(trampoline).address > 0


def test_compiled_policy_is_process_local() -> None:
    policy = CompiledPolicy(libc_function("abs"), keepalive=object())
    assert copy.copy(policy) is policy
    assert copy.deepcopy(policy) is policy
    with pytest.raises(TypeError, match="pickled"):
        pickle.dumps(policy)


def py_spares_or_wait(view: Any, user: Any) -> int:
    return compiled.ACESIM_SPARES if view[0].spare_nodes >= view[0].nodes_needed else 1


def test_from_ctypes_and_invoke() -> None:
    fn = FailurePolicyFn(py_spares_or_wait)
    policy = CompiledPolicy.from_ctypes(fn, user_data=7)
    assert policy.keepalive is fn
    assert policy.user_data == 7
    assert policy.address == ctypes.cast(fn, ctypes.c_void_p).value
    assert policy.invoke(make_view(spare_nodes=2, nodes_needed=1)) == compiled.ACESIM_SPARES
    assert policy.invoke(make_view(spare_nodes=0, nodes_needed=1)) == compiled.ACESIM_WAIT_REPAIR
    with pytest.raises(TypeError, match="ctypes function pointer"):
        CompiledPolicy.from_ctypes(py_spares_or_wait)
    wrong = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)(lambda v: 0)
    with pytest.raises(TypeError, match="arguments"):
        CompiledPolicy.from_ctypes(wrong)
    with pytest.raises(TypeError, match="int32_t"):
        CompiledPolicy.from_ctypes(ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)(print))


def test_from_capsule_with_and_without_a_name() -> None:
    fn = FailurePolicyFn(py_spares_or_wait)
    address = ctypes.cast(fn, ctypes.c_void_p).value
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    name = ctypes.c_char_p(b"acesim_failure_policy_fn")  # must outlive the capsule
    for capsule_name in (name, None):
        capsule = new(address, capsule_name, None)
        policy = CompiledPolicy.from_capsule(capsule, user_data=3)
        assert (policy.address, policy.user_data) == (address, 3)
        assert policy.keepalive is capsule
        assert policy.invoke(make_view(spare_nodes=0)) == compiled.ACESIM_WAIT_REPAIR
    with pytest.raises(TypeError, match="PyCapsule"):
        CompiledPolicy.from_capsule(address)


# ------------------------------------------------------- a Cython policy

PYX = """\
# cython: language_level=3, boundscheck=False, wraparound=False
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int32_t, uintptr_t
from acesim.policy_abi cimport (
    ACESIM_DEFAULT, ACESIM_POLICY_ABI_VERSION, ACESIM_PREEMPT_LOWER, ACESIM_REQUEUE,
    ACESIM_SPARES, ACESIM_WAIT_REPAIR, acesim_failure_policy_fn, acesim_failure_view,
)


cdef int32_t spares_or_wait(const acesim_failure_view* v, void* user) noexcept nogil:
    return ACESIM_SPARES if v.spare_nodes >= v.nodes_needed else ACESIM_WAIT_REPAIR


cdef int32_t spares_above(const acesim_failure_view* v, void* user) noexcept nogil:
    # user_data is a threshold: SPARES only with more than that many spares left over
    if v.spare_nodes >= v.nodes_needed + <uintptr_t>user:
        return ACESIM_SPARES
    return ACESIM_REQUEUE


cdef int32_t builtin(const acesim_failure_view* v, void* user) noexcept nogil:
    return ACESIM_DEFAULT


# the functions have exactly the ABI's type
cdef acesim_failure_policy_fn[3] FUNCTIONS = [spares_or_wait, spares_above, builtin]


def address():
    return <uintptr_t>&spares_or_wait


def spares_above_address():
    return <uintptr_t>FUNCTIONS[1]


def builtin_address():
    return <uintptr_t>FUNCTIONS[2]


def capsule():
    return PyCapsule_New(<void*>spares_or_wait, "acesim_failure_policy_fn", NULL)


def constants():
    return {
        "ACESIM_POLICY_ABI_VERSION": ACESIM_POLICY_ABI_VERSION,
        "ACESIM_DEFAULT": ACESIM_DEFAULT,
        "ACESIM_SPARES": ACESIM_SPARES,
        "ACESIM_WAIT_REPAIR": ACESIM_WAIT_REPAIR,
        "ACESIM_PREEMPT_LOWER": ACESIM_PREEMPT_LOWER,
        "ACESIM_REQUEUE": ACESIM_REQUEUE,
    }


def layout():
    cdef acesim_failure_view v
    cdef uintptr_t base = <uintptr_t>&v
    return sizeof(acesim_failure_view), {
@LAYOUT@
    }


def read(uintptr_t view_address):
    # every field as Cython converts it through the .pxd's declared types
    cdef const acesim_failure_view* v = <const acesim_failure_view*>view_address
    return {
@READ@
    }
"""

SETUP = """\
from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    name="acesim_cython_policy",
    ext_modules=cythonize(
        [
            Extension(
                "acesim_cython_policy",
                ["acesim_cython_policy.pyx"],
                include_dirs=[{include!r}],
            )
        ],
        include_path=[{package_parent!r}],
        quiet=True,
    ),
    script_args=["build_ext", "--inplace"],
)
"""


@pytest.fixture(scope="module")
def cython_policy(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """The example Cython policy, compiled against the installed acesim."""
    include = include_dir()
    pytest.importorskip("Cython", reason="Cython is not installed")
    pytest.importorskip("setuptools", reason="setuptools is not installed")
    c_compiler()
    python_h = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not python_h.is_file():
        pytest.skip(f"no Python headers ({python_h})")
    build = tmp_path_factory.mktemp("cython_policy")
    pyx = PYX.replace(
        "@LAYOUT@",
        "\n".join(f'        "{f}": <uintptr_t>&v.{f} - base,' for f in FIELDS),
    ).replace("@READ@", "\n".join(f'        "{f}": v.{f},' for f in FIELDS))
    (build / "acesim_cython_policy.pyx").write_text(pyx)
    (build / "setup.py").write_text(
        SETUP.format(include=include, package_parent=str(Path(ace.__file__).parent.parent))
    )
    done = subprocess.run(
        [sys.executable, "setup.py"],
        cwd=build,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    sys.path.insert(0, str(build))
    try:
        module = importlib.import_module("acesim_cython_policy")
    finally:
        sys.path.remove(str(build))
    return module


def test_cython_policy_decides_through_ctypes(cython_policy: ModuleType) -> None:
    address = cython_policy.address()
    fn = FailurePolicyFn(address)
    spares = make_view(spare_nodes=2, nodes_needed=2)
    wait = make_view(spare_nodes=1, nodes_needed=2)
    assert fn(ctypes.byref(spares), None) == compiled.ACESIM_SPARES
    assert fn(ctypes.byref(wait), None) == compiled.ACESIM_WAIT_REPAIR

    policy = ace.CompiledPolicy(address, keepalive=cython_policy)
    assert policy.invoke(spares) == compiled.ACESIM_SPARES
    assert policy.invoke(wait) == compiled.ACESIM_WAIT_REPAIR
    from_capsule = CompiledPolicy.from_capsule(cython_policy.capsule())
    assert from_capsule.address == address


def test_cython_policy_gets_user_data(cython_policy: ModuleType) -> None:
    address = cython_policy.spares_above_address()
    view = make_view(spare_nodes=3, nodes_needed=1)
    assert CompiledPolicy(address, user_data=2).invoke(view) == compiled.ACESIM_SPARES
    assert CompiledPolicy(address, user_data=3).invoke(view) == compiled.ACESIM_REQUEUE
    builtin = CompiledPolicy(cython_policy.builtin_address())
    assert builtin.invoke(view) == compiled.ACESIM_DEFAULT


def test_cython_sees_the_ctypes_layout_and_types(cython_policy: ModuleType) -> None:
    size, offsets = cython_policy.layout()
    assert size == ctypes.sizeof(FailureViewStruct)
    assert offsets == {f: getattr(FailureViewStruct, f).offset for f in FIELDS}
    assert cython_policy.constants() == CONSTANTS

    # distinct values, with the sign bit set in the 32-bit fields: a field
    # declared with the wrong signedness or width in the .pxd shows up here
    values: dict[str, Any] = {}
    for i, (name, ftype) in enumerate(FailureViewStruct._fields_):
        if ftype is ctypes.c_double:
            values[name] = 1.5 + i
        elif ftype is ctypes.c_uint32:
            values[name] = 0x8000_0000 + i
        else:
            values[name] = -(i + 1)
    view = FailureViewStruct(**values)
    assert cython_policy.read(ctypes.addressof(view)) == values


# -------------------------------------------------------- a Numba policy


def test_numba_cfunc_policy() -> None:
    numba = pytest.importorskip("numba", reason="numba is not installed")
    from numba import types

    record = numba.from_dtype(np.dtype(FailureViewStruct))
    signature = types.int32(types.CPointer(record), types.voidptr)

    @numba.cfunc(signature, nopython=True)
    def spares_or_wait(view, user):  # type: ignore[no-untyped-def]
        v = numba.carray(view, 1)[0]
        if v.spare_nodes >= v.nodes_needed:
            return 0  # ACESIM_SPARES
        return 1  # ACESIM_WAIT_REPAIR

    policy = CompiledPolicy(spares_or_wait.address, keepalive=spares_or_wait)
    assert policy.invoke(make_view(spare_nodes=4, nodes_needed=4)) == compiled.ACESIM_SPARES
    assert policy.invoke(make_view(spare_nodes=3, nodes_needed=4)) == compiled.ACESIM_WAIT_REPAIR
    assert CompiledPolicy.from_ctypes(spares_or_wait.ctypes).address == policy.address


# ------------------------------- the simulator (once fleet policies exist)


def fleet_scenario() -> tuple[Any, list[Any]]:
    fleet = ace.Fleet(
        nodes=16,
        gpus_per_node=8,
        spares=2,
        repair=ace.Constant(3600.0),
        node_failures=ace.Exponential(20 * ace.DAY),
    )
    jobs = [ace.Job(64, work=3 * ace.DAY, checkpoint_interval=ace.HOUR)]
    return fleet, jobs


def assert_same_jobs(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype
    for name in a.dtype.names or ():
        equal_nan = a[name].dtype.kind in "fc"
        assert np.array_equal(a[name], b[name], equal_nan=equal_nan), name


def test_simulate_with_a_compiled_policy(cython_policy: ModuleType) -> None:
    if not hasattr(ace, "Policy"):
        pytest.skip("fleet policies not available yet")
    fleet, jobs = fleet_scenario()
    compiled_policy = ace.CompiledPolicy(cython_policy.address(), keepalive=cython_policy)

    def run(on_failure: Any) -> Any:
        policy = ace.Policy(replacement=ace.Replacement.SPARES, on_failure=on_failure)
        return ace.simulate(jobs, fleet=fleet, policy=policy, replicas=8, seed=11)

    native = run(compiled_policy)
    python = run(
        lambda view: (
            ace.Replacement.SPARES
            if view.spare_nodes >= view.nodes_needed
            else ace.Replacement.WAIT_REPAIR
        )
    )
    assert_same_jobs(native.jobs, python.jobs)
    assert native.jobs["failures"].sum() > 0, "the scenario must exercise the policy"


def test_simulate_compiled_default_is_the_builtin(cython_policy: ModuleType) -> None:
    if not hasattr(ace, "Policy"):
        pytest.skip("fleet policies not available yet")
    fleet, jobs = fleet_scenario()
    default = ace.CompiledPolicy(cython_policy.builtin_address(), keepalive=cython_policy)
    results = [
        ace.simulate(
            jobs,
            fleet=fleet,
            policy=ace.Policy(replacement=ace.Replacement.SPARES, on_failure=on_failure),
            replicas=8,
            seed=11,
        )
        for on_failure in (default, None)
    ]
    assert_same_jobs(results[0].jobs, results[1].jobs)
