"""A fleet's own failure history, read from its logs: ``acesim.history``.

>>> from acesim import history
>>> h = history.read_sacct("sacct.txt")            # doctest: +SKIP
>>> h.measured().totals["failures"]                # doctest: +SKIP
>>> h.intervals(by="node")                         # doctest: +SKIP

Readers (each raises :class:`HistoryFormatError`, a ValueError naming the
file, line and field, for a malformed file):

- :func:`read_sacct`: Slurm accounting as ``sacct --parsable2`` prints it;
- :func:`read_events`: the generic event log (JSON lines or CSV; the format
  is documented in :mod:`acesim.history._events` and :data:`EVENT_KINDS`);
- the public histories of ``../shared/data``: :func:`read_titan_lifetimes`,
  :func:`read_titan_interfailure`, :func:`read_lanl_systems`,
  :func:`read_lanl_nodes`, :func:`read_philly`, :func:`read_bamboo_lifetimes`,
  :func:`read_bamboo_preemptions`, :func:`read_llama3_causes`,
  :func:`read_acme_states` (and :func:`read_shared` by name, from
  :data:`SHARED_DATA`).

Writers, for a simulation run with ``record_events=True``:
:func:`write_sacct` (what Slurm would have logged) and :func:`write_events`.

Every reader returns a :class:`History` (normalized tables); its
:meth:`History.measured` says what happened and :meth:`History.intervals`
gives the inter-failure samples with right-censoring.
"""

from __future__ import annotations

from ._analysis import Backtest, Burstiness, FamilyFit, Fit, Lemons, recorded_jobs, restart_gaps
from ._errors import HistoryFormatError
from ._events import EVENT_ALIASES, EVENT_FIELDS, EVENT_KINDS, read_events, write_events
from ._model import (
    BUCKET_SOURCES,
    CHECKPOINT_DTYPE,
    DEFAULT_FAILURE_STATES,
    FAILURE_DTYPE,
    GOODPUT_NAMES,
    INTERVAL_KINDS,
    JOB_DTYPE,
    MEASURED_DTYPE,
    RUN_DTYPE,
    RUN_NODE_DTYPE,
    SPELL_DTYPE,
    History,
    Intervals,
    Measured,
    RunState,
)
from ._nodelist import NodeListError, compress_nodelist, expand_nodelist
from ._result import DEFAULT_EPOCH
from ._sacct import SACCT_FIELDS, SLURM_STATES, read_sacct, write_sacct
from ._shared import (
    ACME_DTYPE,
    SHARED_DATA,
    read_acme_states,
    read_bamboo_lifetimes,
    read_bamboo_preemptions,
    read_lanl_nodes,
    read_lanl_systems,
    read_llama3_causes,
    read_philly,
    read_shared,
    read_titan_interfailure,
    read_titan_lifetimes,
)

__all__ = [
    "ACME_DTYPE",
    "BUCKET_SOURCES",
    "CHECKPOINT_DTYPE",
    "DEFAULT_EPOCH",
    "DEFAULT_FAILURE_STATES",
    "EVENT_ALIASES",
    "EVENT_FIELDS",
    "EVENT_KINDS",
    "FAILURE_DTYPE",
    "GOODPUT_NAMES",
    "INTERVAL_KINDS",
    "JOB_DTYPE",
    "MEASURED_DTYPE",
    "RUN_DTYPE",
    "RUN_NODE_DTYPE",
    "SACCT_FIELDS",
    "SHARED_DATA",
    "SLURM_STATES",
    "SPELL_DTYPE",
    "Backtest",
    "Burstiness",
    "FamilyFit",
    "Fit",
    "History",
    "HistoryFormatError",
    "Intervals",
    "Lemons",
    "Measured",
    "NodeListError",
    "RunState",
    "compress_nodelist",
    "expand_nodelist",
    "read_acme_states",
    "read_bamboo_lifetimes",
    "read_bamboo_preemptions",
    "read_events",
    "read_lanl_nodes",
    "read_lanl_systems",
    "read_llama3_causes",
    "read_philly",
    "read_sacct",
    "read_shared",
    "read_titan_interfailure",
    "read_titan_lifetimes",
    "recorded_jobs",
    "restart_gaps",
    "write_events",
    "write_sacct",
]
