"""Results to files and back: :func:`save_result` and :func:`load_result`
(also ``res.save(path)`` and ``SimulationResult.load(path)``), by suffix.

- ``.npz``: every table as its bytes (an ``uint8`` array of the table's
  memory, viewed back with the dtype the metadata gives), and the metadata
  (provenance included) as JSON in the entry ``acesim``.
- ``.parquet`` (needs pyarrow: ``pip install "acesim[parquet]"``): the
  ``jobs`` table in ``x.parquet``, with the metadata as JSON under the
  file's key-value metadata key ``acesim``; every other non-empty table
  beside it as ``x.<table>.parquet`` (``x.trace.parquet``,
  ``x.events.parquet``, ...).
- ``.csv``: the same layout (``x.csv``, ``x.trace.csv``, ...), the metadata
  in ``x.provenance.json``.
- ``.json``: one document: the metadata and ``records``, each table as a
  list of records (``{"replica": 0, "job": 0, ...}``).

The metadata (JSON)::

    {"format": "acesim-result", "format_version": 1, "main": "jobs",
     "seed": 0, "replicas": 200,
     "tables": {"jobs": {"dtype": [["replica", "<u4"], ...], "rows": 200},
                "trace": {...}, "placements": null, ...},
     "provenance": {"acesim_version": "0.1.0", "seed": 0, "replicas": 200,
                    "scenario": {...}, "source": "...", "created": "..."}}

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

import dataclasses
import datetime as _dt
import importlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

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

FORMAT_VERSION = 1
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
    res = SimulationResult._from_tables(
        tables,
        int(meta["seed"]),
        int(meta["replicas"]),
        job_names=prov.get("job_names", ()) if isinstance(prov, Mapping) else (),
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
    text = json.dumps(_jsonable(header), allow_nan=False)
    written: list[Path] = []
    if suffix == ".npz":
        entries: dict[str, Any] = {_KEY: np.array(text)}
        for name, array in tables.items():
            if name == _KEY:
                raise ValueError(f"a table must not be named {_KEY!r}")
            if array is not None:
                # As raw bytes: numpy's writer copies a structured array field
                # by field through a buffer, leaving its padding bytes undefined.
                entries[name] = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        with file.open("wb") as handle:
            np.savez(handle, **entries)
        written.append(file)
    elif suffix == ".json":
        doc = dict(header)
        doc["records"] = {
            name: _records(array) for name, array in tables.items() if array is not None
        }
        file.write_text(json.dumps(doc, allow_nan=False) + "\n", encoding="utf-8")
        written.append(file)
    elif suffix == ".parquet":
        pa, pq = _pyarrow()
        for name, array in tables.items():
            if array is None or (name != main and array.shape[0] == 0):
                continue
            target = file if name == main else _sibling(file, name)
            table = pa.table({c: np.asarray(array[c]) for c in _columns(array)})
            metadata = {_KEY: text} if name == main else {_KEY: json.dumps({"table": name})}
            table = table.replace_schema_metadata(metadata)
            pq.write_table(table, target)
            written.append(target)
    else:  # .csv
        for name, array in tables.items():
            if array is None or (name != main and array.shape[0] == 0):
                continue
            target = file if name == main else _sibling(file, name)
            _write_csv(target, array)
            written.append(target)
        side = _sibling(file, "provenance", ".json")
        side.write_text(json.dumps(header, indent=1, allow_nan=False) + "\n", encoding="utf-8")
        written.append(side)
    return written


def load_tables(
    path: str | os.PathLike[str], *, kind: str | None = None
) -> tuple[dict[str, Array | None], dict[str, Any]]:
    """The tables (by name) and metadata of a file :func:`save_tables`
    wrote; ``kind``: the format the metadata must name."""
    file = Path(path)
    meta = _read_meta(file)
    if kind is not None and meta.get("format") != kind:
        raise ResultFileError(f"{os.fspath(file)} holds {meta.get('format')!r}, not {kind!r}")
    suffix = _suffix(file)
    declared = meta.get("tables")
    if not isinstance(declared, dict):
        raise ResultFileError(f"{os.fspath(file)}: the metadata lacks its tables")
    main = meta.get("main")
    out: dict[str, Array | None] = {}
    npz: Any = None
    records: dict[str, Any] = {}
    if suffix == ".npz":
        npz = np.load(file, allow_pickle=False)
    elif suffix == ".json":
        records = _read_json(file).get("records", {})
    try:
        for name, info in declared.items():
            if info is None:
                out[name] = None
                continue
            dtype = _dtype(file, name, info.get("dtype"))
            rows = int(info.get("rows", -1))
            if suffix == ".npz":
                if name not in npz.files:
                    raise ResultFileError(f"{os.fspath(file)}: no {name} table in the archive")
                raw = npz[name]
                if raw.dtype != np.uint8 or raw.ndim != 1 or raw.size % dtype.itemsize:
                    raise ResultFileError(f"{os.fspath(file)}: {name} is not {rows} rows")
                array = raw.view(dtype)
            elif rows == 0 and name != main:
                array = np.zeros(0, dtype)
            elif suffix == ".json":
                if name not in records:
                    raise ResultFileError(f"{os.fspath(file)}: no records of {name}")
                array = _from_records(records[name], dtype, f"{os.fspath(file)}: {name}")
            elif suffix == ".parquet":
                array = _read_parquet(file if name == main else _sibling(file, name), dtype)
            else:
                array = _read_csv(file if name == main else _sibling(file, name), dtype)
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
    problem = input_file_problem(file)
    if problem == NO_SUCH_FILE:
        raise FileNotFoundError(f"no such file: {os.fspath(file)}")
    if problem is not None:
        raise ResultFileError(f"{os.fspath(file)} {problem}, not a results file")
    text: str | None = None
    if suffix == ".npz":
        try:
            with np.load(file, allow_pickle=False) as npz:
                if _KEY in npz.files:
                    text = str(npz[_KEY])
        except (OSError, ValueError) as exc:
            raise ResultFileError(f"{os.fspath(file)}: not a readable .npz file: {exc}") from None
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
        side = _sibling(file, "provenance", ".json")
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


def _write_csv(target: Path, array: Array) -> None:
    import csv

    names = _columns(array)
    columns = [_texts(array[name]) for name in names]
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(names)
        writer.writerows(zip(*columns, strict=True))


def _read_csv(target: Path, dtype: np.dtype[Any]) -> Array:
    import csv

    if not target.is_file():
        raise ResultFileError(f"no such file: {os.fspath(target)} (a table of the saved result)")
    with target.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        try:
            header = next(reader)
        except StopIteration:
            raise ResultFileError(f"{os.fspath(target)} is empty") from None
        twice = repeated_column(header)
        if twice is not None:
            raise ResultFileError(f"{os.fspath(target)}:1: column {twice!r} appears twice")
        rows = list(reader)
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise ResultFileError(
                f"{os.fspath(target)}:{i + 2}: {len(row)} cells for {len(header)} columns"
            )
    columns = {name: [row[k] for row in rows] for k, name in enumerate(header)}
    return _fill(dtype, len(rows), columns, os.fspath(target))


def _read_parquet(target: Path, dtype: np.dtype[Any]) -> Array:
    _, pq = _pyarrow()
    if not target.is_file():
        raise ResultFileError(f"no such file: {os.fspath(target)} (a table of the saved result)")
    table = pq.read_table(target)
    columns = {
        name: table.column(name).to_numpy(zero_copy_only=False) for name in table.column_names
    }
    n = table.num_rows
    out = np.zeros(n, dtype)
    for name in dtype.names or ():
        if name not in columns:
            if _is_padding(name):
                continue
            raise ResultFileError(f"{os.fspath(target)}: no column {name!r}")
        values = columns[name]
        if out[name].dtype.kind in "US":
            out[name] = np.array([str(v) for v in values], out[name].dtype)
        else:
            out[name] = np.asarray(values).astype(out[name].dtype, copy=False)
    return out
