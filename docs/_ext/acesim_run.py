"""``acesim-run``: a code block that runs when the documentation is built,
shown with what it printed.

.. code-block:: rst

    .. acesim-run::

       import acesim as ace
       print(ace.young_interval(60.0, 8 * ace.HOUR))

Each block runs on its own, in a fresh namespace (so every example can be
copied and run as it stands), with the repository root as the working
directory (so ``../shared/data`` means what it means in the README and the
tests). Its standard output is shown below the code; a block that prints
nothing shows the code alone.

- An exception fails the build: the error names the page and the line of
  the page where it was raised, with the traceback.
- A Python warning raised by a block is a Sphinx warning at the block's
  line (an error with ``-W``).
- ``:needs-data:`` marks a block that reads the public histories in
  ``../shared/data``. When that folder is missing the block is shown
  without running it, with a note saying so, and the build goes on. A block
  that names ``shared/data`` without the option is an error: the option is
  what lets a build without the data pass.

``acesim-command`` runs an ``acesim`` command line the same way (in this
process, through ``acesim.cli.main``, from the repository root) and shows it
as a console session; a non-zero exit status fails the build:

.. code-block:: rst

    .. acesim-command:: acesim interval 60 28440 --work 604800

``acesim_run_summary`` (in ``conf.py``, default True) prints, at the end of
the build, how long the slowest examples took.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import time
import traceback
import warnings
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.errors import SphinxError
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

#: The repository root: the examples' working directory.
ROOT = Path(__file__).resolve().parents[2]
#: Where the examples find the public failure histories.
DATA = ROOT.parent / "shared" / "data"
#: What a block that reads the data names.
DATA_MARK = "shared/data"


class ExampleError(SphinxError):
    """An example of the documentation raised an exception."""

    category = "Example failed"


class AcesimRun(SphinxDirective):
    """Runs its content as Python and shows the code and its output."""

    has_content = True
    required_arguments = 0
    optional_arguments = 0
    option_spec: ClassVar[dict[str, Any]] = {"needs-data": directives.flag}
    #: How the code is shown.
    language = "python"

    def run(self) -> list[nodes.Node]:
        code = "\n".join(self.content)
        source, line = self.get_source_info()
        self._check_data(code)
        shown = self._literal(code, self.language, "acesim-run-code")
        container = nodes.container(classes=["acesim-run"])
        container += shown
        if self._skipped(container, line):
            return [container]
        # The content's first line in the page (1-based).
        first = self.content_offset + 1
        # Blank lines in front so that a traceback's line numbers are the page's.
        compiled = compile("\n" * (first - 1) + code + "\n", source, "exec")
        namespace: dict[str, Any] = {"__name__": "__main__"}
        output = self._execute(lambda: exec(compiled, namespace), source, line)
        if output:
            container += self._literal(output, "text", "acesim-run-output")
        return [container]

    def _literal(self, text: str, language: str, cls: str) -> nodes.literal_block:
        block = nodes.literal_block(text, text, language=language)
        block["classes"].append(cls)
        self.set_source_info(block)
        return block

    def _check_data(self, text: str) -> None:
        if DATA_MARK in text and "needs-data" not in self.options:
            raise self.error(
                f"this example reads {DATA_MARK} but has no :needs-data: option "
                "(the option lets the build pass where the data is absent)"
            )

    def _skipped(self, container: nodes.container, line: int) -> bool:
        """Whether the example needs the data and it is absent (a note then
        says so in ``container``)."""
        if "needs-data" not in self.options or DATA.is_dir():
            return False
        note = nodes.note()
        note += nodes.paragraph(
            text=(
                "This example reads the public failure histories in ../shared/data, "
                "which were not found when this page was built: it is shown without "
                "its output."
            )
        )
        container += note
        logger.info(
            f"acesim-run: {DATA} not found, example shown without running",
            location=(self.env.docname, line),
        )
        return True

    def _execute(self, run: Any, source: str, line: int) -> str:
        """Runs ``run()`` from the repository root; what it printed."""
        out = io.StringIO()
        cwd = os.getcwd()
        started = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                os.chdir(ROOT)
                with contextlib.redirect_stdout(out):
                    run()
            except BaseException as exc:
                trace = "".join(traceback.format_exception(exc))
                raise ExampleError(
                    f"{source}:{line}: the example raised {type(exc).__name__}: {exc}\n{trace}"
                ) from None
            finally:
                os.chdir(cwd)
        elapsed = time.perf_counter() - started
        timings: list[tuple[float, str, int]] = self.env.app.acesim_run_timings  # type: ignore[attr-defined]
        timings.append((elapsed, self.env.docname, line))
        for w in caught:
            where = w.lineno if w.filename == source else line
            logger.warning(
                f"the example raised {w.category.__name__}: {w.message}",
                location=(self.env.docname, where),
                type="acesim-run",
            )
        return out.getvalue()


class AcesimCommand(AcesimRun):
    """Runs an ``acesim`` command line and shows it as a console session."""

    has_content = False
    required_arguments = 1
    final_argument_whitespace = True
    language = "console"

    def run(self) -> list[nodes.Node]:
        command = self.arguments[0]
        source, line = self.get_source_info()
        self._check_data(command)
        argv = shlex.split(command)
        if not argv or argv[0] != "acesim":
            raise self.error(f"acesim-command runs acesim command lines, got {command!r}")
        container = nodes.container(classes=["acesim-run"])
        container += self._literal(f"$ {command}", "console", "acesim-run-code")
        if self._skipped(container, line):
            return [container]

        def call() -> None:
            from acesim.cli import main

            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                status = main(argv[1:])
            if status != 0:
                raise RuntimeError(f"{command!r} exited with status {status}: {err.getvalue()}")

        output = self._execute(call, source, line)
        if output:
            container += self._literal(output, "text", "acesim-run-output")
        return [container]


def _summary(app: Sphinx, exception: BaseException | None) -> None:
    timings: list[tuple[float, str, int]] = app.acesim_run_timings  # type: ignore[attr-defined]
    if exception is not None or not timings or not app.config.acesim_run_summary:
        return
    total = sum(t for t, _, _ in timings)
    logger.info(f"acesim-run: {len(timings)} examples ran in {total:.1f} s; the slowest:")
    for elapsed, docname, line in sorted(timings, reverse=True)[:5]:
        logger.info(f"  {elapsed:6.2f} s  {docname}:{line}")


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("acesim-run", AcesimRun)
    app.add_directive("acesim-command", AcesimCommand)
    app.add_config_value("acesim_run_summary", True, "env")
    app.acesim_run_timings = []  # type: ignore[attr-defined]
    app.connect("build-finished", _summary)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
