"""Results to files and back: :func:`save_result` and :func:`load_result`
(also ``res.save(path)`` and ``SimulationResult.load(path)``), by suffix.

- ``.npz``: every table as its bytes (an ``uint8`` array of the table's
  memory, viewed back with the dtype the metadata gives), and the metadata
  (provenance included) as JSON in the entry ``acesim``.
- ``.parquet`` (needs pyarrow: ``pip install "acesim[parquet]"``): the
  ``jobs`` table in ``x.parquet``, with the metadata as JSON under the
  file's key-value metadata key ``acesim``; every other non-empty table
  beside it as ``x.<table>.<save>.parquet`` (``x.trace.3f9a0c1b.parquet``,
  ...; ``<save>``: 8 hex digits of this save's own).
- ``.csv``: the tables as ``x.<table>.<save>.csv`` (``jobs`` included), the
  metadata in ``x.provenance.json``, and ``x.csv`` the ``jobs`` table (a
  hard link to its file, or a copy; for reading by hand: the loader reads
  the listed file).
- ``.json``: one document: the metadata and ``records``, each table as a
  list of records (``{"replica": 0, "job": 0, ...}``).

Every save is atomic (``acesim._atomic``): a single file is written to a
temporary file beside it and renamed over the old one; in the CSV and
Parquet layouts the tables go first, under names of this save's own, and
the file holding the metadata, which lists each table's file, size and
SHA-256 (``files``), replaces the old one last; the tables the old metadata
listed are removed after. A save cut off at any step leaves the previous
result loadable as it was (and, at worst, unlisted table files beside it).
The loader reads only the listed files and checks their sizes and hashes.
This is format version 2; files of version 1 (the tables at the fixed
names ``x.<table>.csv``, unlisted) still load.

:func:`load_result` also checks that the tables agree with each other and
with the header (``fleet`` has ``replicas`` rows, ``jobs`` a whole number of
rows per replica, one per job name, an ``ettr`` in [0, 1] wherever the
``wall`` or ``gpu_hours`` is positive): a :class:`ResultFileError` names
the field otherwise.

The metadata (JSON)::

    {"format": "acesim-result", "format_version": 2, "main": "jobs",
     "seed": 0, "replicas": 200,
     "tables": {"jobs": {"dtype": [["replica", "<u4"], ...], "rows": 200},
                "trace": {...}, "placements": null, ...},
     "provenance": {"acesim_version": "0.1.0", "seed": 0, "replicas": 200,
                    "scenario": {...}, "source": "...", "created": "..."},
     "files": {"trace": {"file": "x.trace.3f9a0c1b.csv", "bytes": 1234,
                         "sha256": "..."}, ...}}   # CSV and Parquet only

Each table's ``dtype`` is the result's own (``numpy.lib.format``'s
description, padding included); ``null`` for a table the result does not
have. Reading a file back gives arrays equal to the ones written, dtype and
bytes (``tobytes()``). In the text formats a float is written as its
shortest repr (exact), ``inf``, ``-inf``, ``nan`` or ``-nan`` (the sign of a
NaN is kept, in JSON as a string), a boolean as ``true`` / ``false``;
padding fields (``pad_``) are left out when they are zero, as the
simulator writes them, and the bytes between fields are read back as zero
(the simulator's are; an array copied field by field, as
``ndarray.copy()`` and fancy indexing copy a structured array, may hold
anything there: its values are kept, not those bytes).

:func:`save_tables` / :func:`load_tables` write and read any structured
arrays in the same layouts (``acesim sweep --out`` writes its grid with
them).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import hashlib
import importlib
import io
import json
import os
import re
import secrets
import zipfile
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _atomic
from ._validation import NO_SUCH_FILE, input_file_problem, repeated_column
from .errors import UntrustedNameError
from .provenance import check as check_names
from .simulation import TABLES, SimulationResult

__all__ = [
    "FORMATS",
    "ResultFileError",
    "load_provenance",
    "load_result",
    "load_tables",
    "save_result",
    "save_tables",
]

#: The suffixes :func:`save_result` writes and :func:`load_result` reads.
FORMATS = (".npz", ".parquet", ".csv", ".json")

FORMAT_VERSION = 2
_RESULT = "acesim-result"
_KEY = "acesim"

Array = npt.NDArray[Any]


class ResultFileError(ValueError):
    """A file that is not (or no longer) what :func:`load_result` expects:
    it names the file."""


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


#: The provenance entries a result computes itself (its version, seed, ...).
_BASE_PROVENANCE = ("acesim_version", "format", "stream_version", "seed", "replicas", "job_names")


def default_provenance(res: SimulationResult) -> dict[str, Any]:
    """``res.provenance`` (its version, seed, replicas and what produced it)
    with the time of writing (``created``)."""
    created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return {**res.provenance, "created": created}


def save_result(
    res: SimulationResult,
    path: str | os.PathLike[str],
    provenance: Mapping[str, Any] | None = None,
) -> list[Path]:
    """Write ``res`` to ``path`` in the format of its suffix (see the
    module); returns the files written. ``provenance`` (a JSON-able dict,
    e.g. :meth:`acesim.Scenario.provenance`) is stored with it; by default
    the result's own ``provenance`` with the time of writing."""
    if not isinstance(res, SimulationResult):
        raise TypeError(f"res must be a SimulationResult, got {type(res).__name__}")
    prov = default_provenance(res) if provenance is None else dict(provenance)
    tables: dict[str, Array | None] = {name: getattr(res, name) for name in TABLES}
    meta = {"seed": int(res.seed), "replicas": int(res.replicas), "provenance": prov}
    return save_tables(path, tables, meta, kind=_RESULT)


def load_result(path: str | os.PathLike[str]) -> SimulationResult:
    """The :class:`SimulationResult` in a file :func:`save_result` wrote
    (its tables as they were written: dtype and bytes)."""
    tables, meta = load_tables(path, kind=_RESULT)
    for name in TABLES:
        if name not in tables:
            raise ResultFileError(f"{os.fspath(path)}: the file lacks the {name} table")
    prov = meta.get("provenance")
    job_names = prov.get("job_names", ()) if isinstance(prov, Mapping) else ()
    _check_consistent(Path(path), tables, meta, job_names)
    res = SimulationResult._from_tables(
        tables,
        int(meta["seed"]),
        int(meta["replicas"]),
        job_names=job_names,
    )
    if isinstance(prov, Mapping):
        # What produced it, as stored (already JSON data): every name in it
        # is in the provenance tables or names a user callable (never resolved here).
        try:
            check_names(prov)
        except UntrustedNameError as exc:
            raise UntrustedNameError(f"{os.fspath(path)}: {exc}", name=exc.name) from None
        own = {k: v for k, v in prov.items() if k not in _BASE_PROVENANCE}
        res = dataclasses.replace(res, _origin={**own, "described": True})
    return res


def _check_consistent(
    file: Path, tables: Mapping[str, Array | None], meta: Mapping[str, Any], job_names: Any
) -> None:
    """A ResultFileError naming the field where the tables contradict each
    other or the header: ``seed`` and ``replicas`` whole numbers, ``fleet``
    one row per replica, ``jobs`` one row per replica and job (per job name
    when the provenance names them), ``ettr`` in [0, 1] wherever ``wall``
    (jobs) or ``gpu_hours`` (fleet) is positive."""
    where = os.fspath(file)
    for key, low in (("seed", 0), ("replicas", 1)):
        value = meta.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ResultFileError(
                f"{where}: {key} is {value!r} in the header, not an integer >= {low}"
            )
    replicas = int(meta["replicas"])
    jobs, fleet = tables["jobs"], tables["fleet"]
    assert jobs is not None and fleet is not None  # (save_tables writes the first table)
    for table, array, fields in (
        ("jobs", jobs, ("ettr", "wall")),
        ("fleet", fleet, ("ettr", "gpu_hours")),
    ):
        names = array.dtype.names or ()
        for field in fields:
            if field not in names:
                raise ResultFileError(f"{where}: the {table} table lacks its {field} column")
    if fleet.shape[0] != replicas:
        raise ResultFileError(
            f"{where}: replicas is {replicas} in the header, but the fleet table has "
            f"{fleet.shape[0]} rows (one per replica)"
        )
    if jobs.shape[0] % replicas:
        raise ResultFileError(
            f"{where}: the jobs table has {jobs.shape[0]} rows, not a whole number per "
            f"replica (replicas is {replicas} in the header)"
        )
    if (
        isinstance(job_names, list | tuple)
        and job_names
        and jobs.shape[0] != replicas * len(job_names)
    ):
        raise ResultFileError(
            f"{where}: the jobs table has {jobs.shape[0]} rows, but replicas is {replicas} and "
            f"provenance.job_names names {len(job_names)} jobs"
        )
    for table, array, weight in (("jobs", jobs, "wall"), ("fleet", fleet, "gpu_hours")):
        ettr = array["ettr"].astype(np.float64)
        positive = array[weight] > 0
        bad = np.flatnonzero(positive & ~((ettr >= 0.0) & (ettr <= 1.0)))
        if bad.size:
            row = int(bad[0])
            raise ResultFileError(
                f"{where}: {table}.ettr is {float(ettr[row])!r} in row {row}, where "
                f"{table}.{weight} is {float(array[weight][row])!r} (an ETTR lies in [0, 1])"
            )


def load_provenance(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The provenance stored with a result file (None when it has none)."""
    meta = _read_meta(Path(path))
    prov = meta.get("provenance")
    return dict(prov) if isinstance(prov, Mapping) else None


def save_tables(
    path: str | os.PathLike[str],
    tables: Mapping[str, Array | None],
    meta: Mapping[str, Any] | None = None,
    *,
    kind: str = "acesim-tables",
) -> list[Path]:
    """Write structured arrays by name in the layout of ``path``'s suffix:
    the first table in ``path``, the others beside it; ``None`` records a
    table as absent. ``meta`` (JSON-able) goes with them. Returns the files
    written."""
    file = Path(path)
    suffix = _suffix(file)
    if not tables:
        raise ValueError("tables must not be empty")
    names = list(tables)
    for name in names:
        if not isinstance(name, str) or not name or "." in name or os.sep in name:
            raise ValueError(f"table names must be plain words, got {name!r}")
        array = tables[name]
        if array is not None and (not isinstance(array, np.ndarray) or array.dtype.names is None):
            raise TypeError(f"{name} must be a numpy structured array or None")
        if array is not None and array.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    main = names[0]
    if tables[main] is None:
        raise ValueError(f"the first table ({main}) must not be None")
    header: dict[str, Any] = {
        "format": kind,
        "format_version": FORMAT_VERSION,
        "main": main,
        **dict(meta or {}),
        "tables": {
            name: None
            if array is None
            else {"dtype": _descr(array.dtype), "rows": int(array.shape[0])}
            for name, array in tables.items()
        },
    }
    if suffix in (".csv", ".parquet"):
        return _save_tables_multi(file, suffix, tables, header)
    text = json.dumps(_jsonable(header), allow_nan=False)
    if suffix == ".npz":
        entries: dict[str, Any] = {_KEY: np.array(text)}
        for name, array in tables.items():
            if name == _KEY:
                raise ValueError(f"a table must not be named {_KEY!r}")
            if array is not None:
                # As raw bytes: numpy's writer copies a structured array field
                # by field through a buffer, leaving its padding bytes undefined.
                entries[name] = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        _atomic.replace_file(file, lambda handle: np.savez(handle, **entries))
    else:  # .json
        doc = dict(header)
        doc["records"] = {
            name: _records(array) for name, array in tables.items() if array is not None
        }
        _atomic.replace_file(file, json.dumps(doc, allow_nan=False) + "\n")
    return [file]


def _save_tables_multi(
    file: Path, suffix: str, tables: Mapping[str, Array | None], header: dict[str, Any]
) -> list[Path]:
    """The CSV and Parquet layouts (format version 2): each table under a
    name of this save's own (``x.<table>.<token><suffix>``), written and
    fsynced; then the file holding the metadata, which lists each table's
    file, size and SHA-256, replaces the old one (``x.parquet``, holding the
    main table too; ``x.provenance.json`` beside ``x.csv``); then, for CSV,
    ``x.csv`` becomes the main table (a hard link to its listed file, or a
    copy); last, the tables the old metadata listed are removed. A save cut
    off at any step leaves the old metadata and the tables it lists whole."""
    main = header["main"]
    old = _listed_files(file)
    token = secrets.token_hex(4)
    listed: dict[str, dict[str, Any]] = {}
    written: list[Path] = []
    try:
        for name, array in tables.items():
            if array is None or (array.shape[0] == 0 and name != main):
                continue
            if suffix == ".parquet" and name == main:
                continue  # inside the metadata file itself
            target = file.with_name(f"{file.stem}.{name}.{token}{suffix}")
            if suffix == ".csv":
                data = _csv_text(array).encode("utf-8")
            else:
                data = _parquet_bytes(array, {_KEY: json.dumps({"table": name})})
            size, digest = _atomic.write_new(target, data)
            written.append(target)
            listed[name] = {"file": target.name, "bytes": size, "sha256": digest}
        _atomic.fsync_dir(file.parent)
        header = {**header, "files": listed}
        text = json.dumps(_jsonable(header), allow_nan=False)
        if suffix == ".parquet":
            array = tables[main]
            assert array is not None
            _atomic.replace_file(file, _parquet_bytes(array, {_KEY: text}))
            meta_file = file
        else:
            meta_file = _sibling(file, "provenance", ".json")
            pretty = json.dumps(_jsonable(header), indent=1, allow_nan=False) + "\n"
            _atomic.replace_file(meta_file, pretty)
    except BaseException:
        for path in written:  # listed by no metadata
            with contextlib.suppress(OSError):
                path.unlink()
        raise
    if suffix == ".csv":
        _atomic.link_or_copy(file.with_name(listed[main]["file"]), file)
    keep = {p.name for p in written} | {file.name, meta_file.name}
    for path in old:
        if path.name not in keep:
            _atomic.remove(path)
    return [file, *written] + ([meta_file] if meta_file != file else [])


def _replaced_files(path: str | os.PathLike[str]) -> list[Path]:
    """The fixed names a save to ``path`` replaces (the others it writes are
    new): ``path``, and for CSV ``x.provenance.json`` beside it."""
    file = Path(path)
    return [file, _sibling(file, "provenance", ".json")] if _suffix(file) == ".csv" else [file]


def _read_files(path: str | os.PathLike[str]) -> list[Path]:
    """The files a load of ``path`` reads (those that exist): the file, the
    metadata beside a CSV one, and the tables its metadata lists."""
    file = Path(path)
    files = [file, *_replaced_files(file)[1:], *_listed_files(file, own=False)]
    return [f for f in files if f.exists()]


def _listed_files(file: Path, *, own: bool = True) -> list[Path]:
    """The table files the metadata now at ``file`` lists (format version 1:
    its fixed sibling names); none when there is no readable metadata. With
    ``own`` (the files a save may remove), only names of the layout's own
    form for ``file`` count (``x.<table>.<8 hex><suffix>``,
    ``x.<table><suffix>`` in version 1), so that a metadata file edited to
    list another file never gets that file removed; else every plain file
    name it lists (what a load reads: a result renamed, ``y.csv`` listing
    ``x.jobs.<8 hex>.csv``, still loads)."""
    try:
        meta = _read_meta(file)
    except (OSError, ValueError, ImportError):
        return []
    declared = meta.get("tables")
    names: list[str] = []
    if meta.get("format_version") == 1 and isinstance(declared, dict):
        main = meta.get("main")
        names = [
            _sibling(file, name).name
            for name in declared
            if name != main and isinstance(name, str) and _TABLE_NAME.fullmatch(name)
        ]
    elif isinstance(meta.get("files"), dict):
        pattern = re.compile(
            rf"{re.escape(file.stem)}\.(?P<table>{_TABLE_NAME.pattern})\.[0-9a-f]{{8}}"
            + re.escape(file.suffix)
        )
        for table, info in meta["files"].items():
            name = info.get("file") if isinstance(info, dict) else None
            if not isinstance(name, str) or not _plain_file_name(name):
                continue
            m = pattern.fullmatch(name)
            if not own or (m is not None and m.group("table") == table):
                names.append(name)
    return [file.with_name(name) for name in names]


#: A table's name in a file name (save_tables refuses others).
_TABLE_NAME = re.compile(r"[^./\\]+")


def _plain_file_name(name: str) -> bool:
    """A bare file name in the result's folder (no folder part, not hidden)."""
    return (
        bool(name)
        and Path(name).name == name
        and "/" not in name
        and "\\" not in name
        and not name.startswith(".")
    )


def load_tables(
    path: str | os.PathLike[str], *, kind: str | None = None
) -> tuple[dict[str, Array | None], dict[str, Any]]:
    """The tables (by name) and metadata of a file :func:`save_tables`
    wrote; ``kind``: the format the metadata must name. In the CSV and
    Parquet layouts of format version 2 only the table files the metadata
    lists are read, each checked against its size and SHA-256."""
    file = Path(path)
    meta = _read_meta(file)
    if kind is not None and meta.get("format") != kind:
        raise ResultFileError(f"{os.fspath(file)} holds {meta.get('format')!r}, not {kind!r}")
    suffix = _suffix(file)
    declared = meta.get("tables")
    if not isinstance(declared, dict):
        raise ResultFileError(f"{os.fspath(file)}: the metadata lacks its tables")
    main = meta.get("main")
    listed = meta.get("files") if meta["format_version"] >= 2 else None
    if suffix in (".csv", ".parquet") and meta["format_version"] >= 2:
        if not isinstance(listed, dict):
            raise ResultFileError(f"{os.fspath(file)}: the metadata lacks its list of files")
    out: dict[str, Array | None] = {}
    npz: Any = None
    records: dict[str, Any] = {}
    if suffix == ".npz":
        npz = _open_npz(file)
    elif suffix == ".json":
        records = _read_json(file).get("records", {})
    try:
        for name, info in declared.items():
            if info is None:
                out[name] = None
                continue
            if not isinstance(info, dict):
                raise ResultFileError(f"{os.fspath(file)}: tables.{name} is not an object")
            dtype = _dtype(file, name, info.get("dtype"))
            rows = info.get("rows")
            if not isinstance(rows, int) or isinstance(rows, bool) or rows < 0:
                raise ResultFileError(f"{os.fspath(file)}: tables.{name}.rows is {rows!r}")
            where = f"{os.fspath(file)}: {name}"
            if suffix == ".npz":
                if name not in npz.files:
                    raise ResultFileError(f"{os.fspath(file)}: no {name} table in the archive")
                try:
                    raw = npz[name]
                except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
                    raise ResultFileError(
                        f"{os.fspath(file)}: the {name} table is damaged (a truncated file?): {exc}"
                    ) from None
                if raw.dtype != np.uint8 or raw.ndim != 1 or raw.size % dtype.itemsize:
                    raise ResultFileError(f"{os.fspath(file)}: {name} is not {rows} rows")
                array = raw.view(dtype)
            elif suffix == ".json":
                if rows == 0 and name != main:
                    array = np.zeros(0, dtype)
                elif name not in records:
                    raise ResultFileError(f"{os.fspath(file)}: no records of {name}")
                else:
                    array = _from_records(records[name], dtype, where)
            elif suffix == ".parquet" and name == main:
                array = _read_parquet(file, dtype, where)
            elif listed is not None:
                if rows == 0 and name != main and name not in listed:
                    array = np.zeros(0, dtype)
                else:
                    data = _listed_bytes(file, name, listed.get(name))
                    array = (
                        _read_parquet(_pyarrow()[0].BufferReader(data), dtype, where)
                        if suffix == ".parquet"
                        else _read_csv(data, dtype, where)
                    )
            elif rows == 0 and name != main:
                array = np.zeros(0, dtype)
            else:  # format version 1: the tables at fixed names beside the file
                target = file if name == main else _sibling(file, name)
                if not target.is_file():
                    raise ResultFileError(
                        f"no such file: {os.fspath(target)} (a table of the saved result)"
                    )
                if suffix == ".parquet":
                    array = _read_parquet(target, dtype, os.fspath(target))
                else:
                    array = _read_csv(target.read_bytes(), dtype, os.fspath(target))
            if array.shape[0] != rows:
                raise ResultFileError(
                    f"{os.fspath(file)}: {name} has {array.shape[0]} rows, the metadata says "
                    f"{rows} (a file left from another save?)"
                )
            out[name] = array
    finally:
        if npz is not None:
            npz.close()
    return out, meta


def _listed_bytes(file: Path, name: str, info: Any) -> bytes:
    """The content of the file the metadata lists for table ``name``,
    checked against the size and SHA-256 it gives."""
    where = f"{os.fspath(file)}: files.{name}"
    if not isinstance(info, dict):
        raise ResultFileError(f"{where}: the metadata lists no file for the {name} table")
    filename, size, digest = info.get("file"), info.get("bytes"), info.get("sha256")
    if not isinstance(filename, str) or not _plain_file_name(filename):
        raise ResultFileError(f"{where}.file must be a file name beside it, got {filename!r}")
    if not isinstance(size, int) or isinstance(size, bool) or not isinstance(digest, str):
        raise ResultFileError(f"{where}: the metadata lacks the file's bytes and sha256")
    target = file.with_name(filename)
    try:
        data = target.read_bytes()
    except FileNotFoundError:
        raise ResultFileError(
            f"no such file: {os.fspath(target)} (the {name} table of {os.fspath(file)})"
        ) from None
    except OSError as exc:
        raise ResultFileError(f"{os.fspath(target)}: cannot read: {exc.strerror}") from None
    if len(data) != size:
        raise ResultFileError(
            f"{os.fspath(target)} has {len(data)} bytes, the metadata of {os.fspath(file)} "
            f"says {size} (files.{name}.bytes): changed since it was saved"
        )
    if hashlib.sha256(data).hexdigest() != digest:
        raise ResultFileError(
            f"{os.fspath(target)}: its SHA-256 is not the one the metadata of "
            f"{os.fspath(file)} gives (files.{name}.sha256): changed since it was saved"
        )
    return data


def _open_npz(file: Path) -> Any:
    """``numpy.load`` of an archive; a damaged or truncated one is a
    ResultFileError naming the file (never a raw ``BadZipFile``)."""
    try:
        return np.load(file, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise ResultFileError(
            f"{os.fspath(file)}: not a readable .npz file (truncated or damaged?): {exc}"
        ) from None


# ---------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------


def _suffix(file: Path) -> str:
    suffix = file.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(
            f"{os.fspath(file)}: the format comes from the suffix, one of "
            f"{', '.join(FORMATS)}; got {file.suffix or 'none'!r}"
        )
    return suffix


def _sibling(file: Path, name: str, suffix: str | None = None) -> Path:
    """``x.parquet`` -> ``x.<name>.parquet`` (or ``x.<name><suffix>``)."""
    return file.with_name(f"{file.stem}.{name}{suffix or file.suffix}")


def _read_meta(file: Path) -> dict[str, Any]:
    suffix = _suffix(file)
    side = _sibling(file, "provenance", ".json")
    problem = input_file_problem(file)
    # (a CSV result's metadata beside it is enough: x.csv is a copy of a listed table)
    if problem == NO_SUCH_FILE and not (suffix == ".csv" and side.is_file()):
        raise FileNotFoundError(f"no such file: {os.fspath(file)}")
    if problem is not None and problem != NO_SUCH_FILE:
        raise ResultFileError(f"{os.fspath(file)} {problem}, not a results file")
    text: str | None = None
    if suffix == ".npz":
        with _open_npz(file) as npz:
            try:
                if _KEY in npz.files:
                    text = str(npz[_KEY])
            except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
                raise ResultFileError(
                    f"{os.fspath(file)}: not a readable .npz file (truncated or damaged?): {exc}"
                ) from None
    elif suffix == ".json":
        doc = _read_json(file)
        meta = {k: v for k, v in doc.items() if k != "records"}
        return _checked(file, meta)
    elif suffix == ".parquet":
        _, pq = _pyarrow()
        try:
            schema = pq.read_schema(file)
        except Exception as exc:  # pyarrow raises its own error types
            raise ResultFileError(
                f"{os.fspath(file)}: not a readable parquet file: {exc}"
            ) from None
        raw = (schema.metadata or {}).get(_KEY.encode())
        text = None if raw is None else raw.decode("utf-8")
    else:
        if side.is_file():
            text = side.read_text(encoding="utf-8")
        else:
            raise ResultFileError(
                f"{os.fspath(file)}: no {side.name} beside it (the metadata of a saved result)"
            )
    if text is None:
        raise ResultFileError(f"{os.fspath(file)} is not a file acesim wrote (no metadata)")
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultFileError(f"{os.fspath(file)}: unreadable metadata: {exc}") from None
    return _checked(file, meta)


def _checked(file: Path, meta: Any) -> dict[str, Any]:
    if not isinstance(meta, dict) or "tables" not in meta:
        if isinstance(meta, dict) and "table" in meta:
            raise ResultFileError(
                f"{os.fspath(file)} is the {meta['table']} table of a saved result; "
                "open the main file"
            )
        raise ResultFileError(f"{os.fspath(file)} is not a file acesim wrote")
    version = meta.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ResultFileError(
            f"{os.fspath(file)}: format version {version!r}; this acesim reads up to "
            f"{FORMAT_VERSION}"
        )
    return meta


def _read_json(file: Path) -> dict[str, Any]:
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultFileError(f"{os.fspath(file)}: not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ResultFileError(f"{os.fspath(file)} is not a file acesim wrote")
    return doc


def _pyarrow() -> tuple[Any, Any]:
    try:
        pa = importlib.import_module("pyarrow")
        pq = importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise ImportError('parquet files need pyarrow: pip install "acesim[parquet]"') from None
    return pa, pq


# ---------------------------------------------------------------------------
# Columns and values
# ---------------------------------------------------------------------------


def _descr(dtype: np.dtype[Any]) -> Any:
    descr: Any = np.lib.format.dtype_to_descr(dtype)
    return descr


def _as_tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_as_tuples(v) for v in value)
    return value


def _dtype(file: Path, name: str, descr: Any) -> np.dtype[Any]:
    try:
        if isinstance(descr, str):
            return np.dtype(descr)
        fields = [_as_tuples(item) for item in descr]
        dtype: np.dtype[Any] = np.lib.format.descr_to_dtype(fields)
        return dtype
    except (TypeError, ValueError) as exc:
        raise ResultFileError(f"{os.fspath(file)}: {name}: unreadable dtype: {exc}") from None


def _jsonable(value: Any) -> Any:
    """Tuples as lists (JSON has no tuples); checks nothing else."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def _is_padding(name: str) -> bool:
    return name == "pad" or name.startswith("pad_")


def _columns(array: Array) -> list[str]:
    """The fields written: all but zero padding fields."""
    names = array.dtype.names or ()
    out = []
    for name in names:
        column = array[name]
        if column.dtype.shape:
            raise TypeError(f"field {name!r}: sub-array fields are not supported")
        if column.dtype.kind not in "biufUS":
            raise TypeError(f"field {name!r}: dtype {column.dtype} is not supported")
        if _is_padding(name) and not np.any(column):
            continue
        out.append(name)
    return out


def _float_texts(values: Array) -> list[str]:
    texts = [repr(x) for x in values.astype(np.float64).tolist()]
    for i in np.flatnonzero(np.isnan(values) & np.signbit(values)).tolist():
        texts[i] = "-nan"
    return texts


def _texts(column: Array) -> list[str]:
    kind = column.dtype.kind
    if kind == "f":
        return _float_texts(column)
    if kind == "b":
        return ["true" if x else "false" for x in column.tolist()]
    if kind == "S":
        return [x.decode("utf-8") for x in column.tolist()]
    return [str(x) for x in column.tolist()]


def _values(column: Array) -> list[Any]:
    """JSON values of a column: numbers, booleans, strings; non-finite
    floats as the strings ``inf``, ``-inf``, ``nan``, ``-nan``."""
    kind = column.dtype.kind
    if kind == "f":
        finite = np.isfinite(column)
        if finite.all():
            return [float(x) for x in column.tolist()]
        texts = _float_texts(column)
        return [
            float(x) if ok else t for x, ok, t in zip(column.tolist(), finite, texts, strict=True)
        ]
    if kind == "S":
        return [x.decode("utf-8") for x in column.tolist()]
    out: list[Any] = column.tolist()
    return out


def _records(array: Array) -> list[dict[str, Any]]:
    names = _columns(array)
    columns = [_values(array[name]) for name in names]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def _fill(dtype: np.dtype[Any], n: int, columns: Mapping[str, Iterable[Any]], where: str) -> Array:
    """An array of ``dtype`` (zero elsewhere, as the simulator leaves its
    padding) with the given columns converted. (``np.zeros`` allocates zeroed
    memory; ``np.zeros_like`` would fill field by field, leaving the bytes
    between fields undefined.)"""
    out = np.zeros(n, dtype)
    names = dtype.names or ()
    for name in names:
        if name not in columns:
            if _is_padding(name):
                continue
            raise ResultFileError(f"{where}: no column {name!r}")
        target = out[name]
        values = list(columns[name])
        if len(values) != n:
            raise ResultFileError(f"{where}: column {name!r} has {len(values)} values, not {n}")
        kind = target.dtype.kind
        try:
            if kind == "b":
                if values and isinstance(values[0], str):
                    bad = [v for v in values if v not in ("true", "false")]
                    if bad:
                        raise ValueError(f"not true or false: {bad[0]!r}")
                    out[name] = np.array([v == "true" for v in values], np.bool_)
                else:
                    out[name] = np.array(values, np.bool_)
            elif kind == "f":
                out[name] = np.array(values, dtype=np.float64).astype(target.dtype)
            elif kind in "iu":
                if values and isinstance(values[0], str):
                    out[name] = np.array(values).astype(target.dtype)
                else:
                    out[name] = np.array(values, dtype=target.dtype)
            elif kind == "S":
                out[name] = np.array([str(v).encode("utf-8") for v in values], target.dtype)
            else:
                out[name] = np.array([str(v) for v in values], target.dtype)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ResultFileError(f"{where}: column {name!r}: {exc}") from None
    for name in columns:
        if name not in names:
            raise ResultFileError(f"{where}: unexpected column {name!r}")
    return out


def _from_records(records: Any, dtype: np.dtype[Any], where: str) -> Array:
    if not isinstance(records, list):
        raise ResultFileError(f"{where}: records must be a list")
    columns: dict[str, list[Any]] = {}
    for name in dtype.names or ():
        values = []
        for i, record in enumerate(records):
            if not isinstance(record, dict):
                raise ResultFileError(f"{where}: record {i} is not an object")
            if name not in record:
                if _is_padding(name):
                    break
                raise ResultFileError(f"{where}: record {i} lacks {name!r}")
            values.append(record[name])
        else:
            columns[name] = values
    return _fill(dtype, len(records), columns, where)


def _csv_text(array: Array) -> str:
    import csv

    names = _columns(array)
    columns = [_texts(array[name]) for name in names]
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(names)
    writer.writerows(zip(*columns, strict=True))
    return buffer.getvalue()


def _parquet_bytes(array: Array, metadata: Mapping[str, str]) -> bytes:
    pa, pq = _pyarrow()
    table = pa.table({c: np.asarray(array[c]) for c in _columns(array)})
    table = table.replace_schema_metadata(dict(metadata))
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    data: bytes = sink.getvalue().to_pybytes()
    return data


def _read_csv(data: bytes, dtype: np.dtype[Any], where: str) -> Array:
    import csv

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultFileError(f"{where}: not UTF-8 text: {exc}") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise ResultFileError(f"{where} is empty") from None
    twice = repeated_column(header)
    if twice is not None:
        raise ResultFileError(f"{where}:1: column {twice!r} appears twice")
    rows = list(reader)
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise ResultFileError(f"{where}:{i + 2}: {len(row)} cells for {len(header)} columns")
    columns = {name: [row[k] for row in rows] for k, name in enumerate(header)}
    return _fill(dtype, len(rows), columns, where)


def _read_parquet(source: Any, dtype: np.dtype[Any], where: str) -> Array:
    _, pq = _pyarrow()
    try:
        table = pq.read_table(source)
    except Exception as exc:  # pyarrow raises its own error types
        raise ResultFileError(f"{where}: not a readable parquet table: {exc}") from None
    columns = {
        name: table.column(name).to_numpy(zero_copy_only=False) for name in table.column_names
    }
    n = table.num_rows
    out = np.zeros(n, dtype)
    for name in dtype.names or ():
        if name not in columns:
            if _is_padding(name):
                continue
            raise ResultFileError(f"{where}: no column {name!r}")
        values = columns[name]
        if out[name].dtype.kind in "US":
            out[name] = np.array([str(v) for v in values], out[name].dtype)
        else:
            out[name] = np.asarray(values).astype(out[name].dtype, copy=False)
    return out
