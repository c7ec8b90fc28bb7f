"""``laya batch IN --out OUT``: answer questions for every row of a JSONL, CSV or Parquet file.

Each input row's fields are kept and the answers added (``<q>``, ``<q>_confidence`` per question,
and ``result``, the whole result), one output row per input row, in input order. By default the
rows are answered here, through the Router's ``predict_batch`` with the default model unless
``--model`` names another (``auto`` routes), with a progress bar on a terminal, and the command
prints one summary line; ``--ray`` scores them on Ray Data instead (:func:`laya.ray.score_dataset`,
the ``ray`` extra), with Ray's own logs silenced unless ``--verbose``.

Rows reach the output as they are answered (:mod:`laya.files.row_output`): after Ctrl-C,
``SIGTERM`` or a crash it holds every finished row and nothing half-written, and ``--resume``
continues it; an existing output is refused without ``--resume`` or ``--force``. Rows that cannot
be used are skipped, named on stderr at the end, and make the exit status 2 unless ``--skip-bad``
(docs/cli.md, "laya batch").
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from ..commands import (
    chunk_rows,
    command_parser,
    on_terminal,
    progress,
    run_command,
)
from ..engine.result import Result, answer_columns
from ..errors import InvalidRequest, TooManyOptions
from ..files.row_input import BadRows, RowFile, file_digest, read_rows, row_format
from ..files.row_output import open_rows, plan_output, run_record
from .command import fraction, group_size, positive_int
from .render import MANY_OPTIONS_HINT, option_notes

if TYPE_CHECKING:
    from ..typed.presets import Questions

__all__ = ["answer_kinds", "batch_main"]

CHUNK = 256  # rows per predict_batch call at most (--batch-size when smaller; 8 under a bar)
RAY_STATE_COLUMN = "_laya_state_json"  # the one column laya batch --ray sends to Ray
PROG = "laya batch"


def _parser() -> argparse.ArgumentParser:
    parser = command_parser(
        PROG,
        "Answer questions for every row of a JSONL, CSV or Parquet file; each row's fields are "
        "kept and the answers added, row by row as they are answered.",
        epilog="Without --preset or --questions the 'router' preset is answered (as laya "
        "--predict does). The formats follow the files' extensions (.jsonl, .csv, .parquet). "
        "Rows that cannot be used (not JSON, no state, a CSV record of the wrong length) are "
        "skipped and named at the end; they make the exit status 2 unless --skip-bad. Exit "
        "status: 0 done, 1 failed while running, 2 usage error or bad rows, 130 Ctrl-C, 143 "
        "SIGTERM (the output then holds every row answered; --resume continues it).",
    )
    add = parser.add_argument
    add("input", metavar="INPUT", help="the rows: JSONL (one object a line), CSV or Parquet")
    add("output", metavar="OUTPUT", nargs="?", help="where to write (or --out)")
    add("--out", "-o", dest="out", metavar="OUTPUT", help="where to write, row by row")
    add("--resume", action="store_true", help="continue OUTPUT where an earlier run stopped")
    add("--force", action="store_true", help="replace an existing OUTPUT")
    add("--skip-bad", action="store_true", help="exit 0 though some rows cannot be used")
    add("--preset", help="a ready-made question set (laya --help lists them)")
    add("--questions", metavar="FILE", help="the questions in a JSON file")
    add(
        "--model",
        metavar="NAME|PATH",
        help="pin a checkpoint (mini: the bundled offline model), or auto (the default): route "
        "each row by language, an undecided one to LAYA_DEFAULT_MODEL, else multilingual",
    )
    add("--calibration", metavar="FILE", help="calibrate the pinned checkpoint with this file")
    add("--state-column", default="state", help="the field holding each row's state")
    add(
        "--batch-size",
        type=positive_int,
        default=64,
        help="rows per forward batch, written together (with --ray: per call)",
    )
    add("--min-confidence", type=fraction, metavar="P", help="flag answers below P (0 to 1)")
    add(
        "--device",
        help="answer on PyTorch on this device, e.g. cpu, cuda (default: mini on ONNX Runtime "
        "when installed, else the best torch device)",
    )
    add(
        "--tournament",
        type=group_size,
        metavar="G",
        help="answer choices in groups of G options, or auto (default: off; not with --ray)",
    )
    add(
        "--shortlist",
        type=positive_int,
        metavar="K",
        help="read only the K options nearest the state (default: off; not with --ray)",
    )
    add("--ray", action="store_true", help="score on Ray Data (pip install 'laya[ray]')")
    add("--concurrency", type=positive_int, default=1, help="Ray actors, with --ray")
    add("--verbose", action="store_true", help="with --ray, show Ray's own logs")
    return parser


def batch_main(argv: Sequence[str] | None = None) -> int:
    """``laya batch``: exit 0 done, 1 failed while running, 2 usage or bad rows (named), 130
    Ctrl-C, 143 ``SIGTERM``."""
    return run_command(PROG, argv, _parser().parse_args, _batch_command)


def _batch_command(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    output = _output(args)
    here_only = [f"--{n}" for n in ("tournament", "shortlist", "calibration") if vars(args)[n]]
    if args.ray and here_only:
        raise InvalidRequest(f"{' and '.join(here_only)} answer here only; drop --ray")
    questions, state_key = _questions(args)
    bad = BadRows()
    source = read_rows(args.input, "input file", bad)
    rows, requests = _requests(args, source, questions, state_key, bad)
    answering = _Ray(args, questions) if args.ray else _Here(args, questions)
    kinds = answer_kinds(questions)
    settings = _settings(args, answering.model, questions)
    plan = plan_output(
        output, run_record(PROG, rows, settings, kinds), resume=args.resume, force=args.force
    )
    todo = requests[plan.done :]
    if todo:
        answering.load(todo)
    with open_rows(plan, rows, kinds) as out:
        for answers in answering.answers(todo):
            out.write(answers)
    already = f" ({plan.done} there already)" if plan.resume else ""
    took = time.perf_counter() - started
    print(f"wrote {out.written} rows to {output}{already} in {took:.1f} s")
    return bad.report(PROG, args.skip_bad)


def _output(args: argparse.Namespace) -> str:
    """The output path, given once, in a folder that exists; its format's needs met (checked
    before any work)."""
    if bool(args.output) == bool(args.out):
        raise InvalidRequest("give the output file once: laya batch IN.jsonl --out OUT.jsonl")
    if args.resume and args.force:
        raise InvalidRequest("give --resume (continue the output) or --force (replace it)")
    output: str = args.output or args.out
    target = Path(output)
    if target.is_dir():
        raise InvalidRequest(f"cannot write {output}: it is a directory")
    if not target.parent.is_dir():
        raise InvalidRequest(f"cannot write {output}: there is no folder {target.parent}")
    if target.resolve() == Path(args.input).resolve():
        raise InvalidRequest(f"cannot write {output}: it is the input; name another output")
    for path in (args.input, output):
        if row_format(path) == "parquet":
            from ..files.parquet import require_pyarrow

            require_pyarrow(path)
    return output


def _questions(args: argparse.Namespace) -> tuple[Questions, str]:
    """The questions of ``--preset`` or ``--questions`` (default: the router preset), and the
    state field a plain-string state is wrapped in."""
    from ..typed.presets import PRESETS, state_field
    from .command import DEFAULT_STATE_KEY, UsageError, read_questions_file

    if args.preset and args.questions:
        raise InvalidRequest("give --preset NAME or --questions FILE, not both")
    if args.questions:
        try:
            return read_questions_file(args.questions)
        except UsageError as exc:
            raise InvalidRequest(str(exc)) from None
    name = args.preset or "router"
    if name not in PRESETS:
        raise InvalidRequest(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    questions = PRESETS[name]()
    return questions, state_field(questions) or DEFAULT_STATE_KEY


def answer_kinds(questions: Mapping[str, Mapping[str, object]]) -> dict[str, str]:
    """The answer columns of ``questions`` in output order, each ``text`` (a choice's label, the
    whole ``result`` as JSON) or ``number`` (a score's level, a noul's P(true), a confidence)."""
    kinds: dict[str, str] = {}
    for qid, definition in questions.items():
        kinds[qid] = "text" if definition.get("type") == "choice" else "number"
        kinds[f"{qid}_confidence"] = "number"
    kinds["result"] = "text"
    return kinds


def _requests(
    args: argparse.Namespace,
    source: RowFile,
    questions: Questions,
    state_key: str,
    bad: BadRows,
) -> tuple[RowFile, list[dict[str, object]]]:
    """The rows that can be answered (the others go to ``bad``, naming their line) and their
    Router requests, every state checked before any work."""
    from ..router.requests import check_request

    column = args.state_column
    if source.format != "jsonl" and column not in source.columns:
        raise InvalidRequest(
            f"{source.path}: no {column!r} column (columns: {', '.join(source.columns)}); "
            "pass --state-column"
        )
    kept, requests = [], []
    for row in source.rows:
        if column not in row.value:
            bad.add(row.where, f"no {column!r} field (pass --state-column)")
            continue
        state = row.value[column]
        state = {state_key: state} if isinstance(state, str) else state
        request = {"state": state, "questions": questions}
        try:
            check_request(request, f"{row.where}:")
        except (TypeError, ValueError) as exc:
            bad.add(row.where, bad.problem(row.where, str(exc)))
            continue
        kept.append(row)
        requests.append(request)
    if not kept:
        raise bad.none_usable(source.path)
    usable = RowFile(source.path, source.format, kept, source.columns, source.read)
    usable.table = source.table
    return usable, requests


def _settings(
    args: argparse.Namespace, model: str | None, questions: Questions
) -> dict[str, object]:
    """What the run file records of the settings that change answers (``--resume`` compares)."""
    from hashlib import sha256

    asked = json.dumps(questions, sort_keys=True, ensure_ascii=False).encode("utf-8")
    origin = f"--questions {args.questions}" if args.questions else f"--preset {args.preset}"
    calibration = None
    if args.calibration:
        calibration = {"sha256": file_digest(args.calibration), "from": args.calibration}
    return {
        "--model": model or "auto",
        "questions": {"sha256": sha256(asked).hexdigest(), "from": origin},
        "--state-column": args.state_column,
        "--calibration": calibration,
        "--min-confidence": args.min_confidence,
        "--tournament": args.tournament,
        "--shortlist": args.shortlist,
    }


def _rows_of(results: list[Result], questions: Questions) -> list[dict[str, object]]:
    """Each result's answer columns (``result`` as JSON text)."""
    columns = answer_columns(results, questions)
    return [{name: values[i] for name, values in columns.items()} for i in range(len(results))]


class _Here:
    """Answering on this machine through a Router, chunk by chunk, a bar on a terminal."""

    def __init__(self, args: argparse.Namespace, questions: Questions) -> None:
        from ..router import Router, pins
        from .command import calibrate, pin

        self.args, self.questions = args, questions
        self.router = Router(device=args.device, default=pins.default_model())
        self.model = pin(self.router, args.model, "--model") if args.model else None
        if args.calibration:
            calibrate(self.router, self.model, args.calibration)
        self.pinned = {"model": self.model} if self.model else {}

    def load(self, requests: list[dict[str, object]]) -> None:
        """Every checkpoint the rows need, before the first answer."""
        from .command import load_routed

        load_routed(self.router, [{**r, **self.pinned} for r in requests], self.args.device)

    def answers(self, requests: list[dict[str, object]]) -> Iterator[list[dict[str, object]]]:
        """The answer columns of each chunk, in order, as its predict_batch call returns."""
        shown = on_terminal()
        step = chunk_rows(min(CHUNK, self.args.batch_size), shown)
        noted: set[str] = set()
        with progress(len(requests), shown=shown) as advance:
            for start in range(0, len(requests), step):
                chunk = [{**r, **self.pinned} for r in requests[start : start + step]]
                results = self._predict(chunk)
                _note_many_options(results, noted)
                yield _rows_of(results, self.questions)
                advance(len(chunk))

    def _predict(self, chunk: list[dict[str, object]]) -> list[Result]:
        """One predict_batch call; a choice with too many options for one pass says what
        answers it."""
        args = self.args
        try:
            return self.router.predict_batch(
                chunk,
                batch_size=args.batch_size,
                min_confidence=args.min_confidence,
                tournament=args.tournament,
                shortlist=args.shortlist,
            )
        except TooManyOptions as exc:
            raise InvalidRequest(f"{exc}; or {MANY_OPTIONS_HINT}") from None


def _note_many_options(results: list[Result], noted: set[str]) -> None:
    """Say once per question, on stderr, that its options could not all be told apart."""
    for result in results:
        for note in option_notes(result):
            if note not in noted:
                noted.add(note)
                print(f"{PROG}: note: {note}", file=sys.stderr)


class _Ray:
    """Scoring on Ray Data; Ray's logs and progress bars only with ``--verbose``.

    The file is read and checked here, as without ``--ray``; Ray gets each state as JSON text
    (one Arrow column cannot hold strings, objects and lists, or objects of different keys) and
    hands back the answer columns, row by row in input order.
    """

    def __init__(self, args: argparse.Namespace, questions: Questions) -> None:
        try:
            import ray.data  # noqa: F401 - refused here, before any work, when missing
        except ImportError:
            raise InvalidRequest("--ray needs Ray: pip install 'laya[ray]'") from None
        from ..ray.scale import checkpoint_for

        self.args, self.questions = args, questions
        self.given = args.model
        self.model = checkpoint_for(self.given)[1].get("model")  # checked before any file

    def load(self, requests: list[dict[str, object]]) -> None:
        """Ray's actors load the checkpoint; start Ray here."""
        import ray

        _start_ray(ray, self.args.verbose)

    def answers(self, requests: list[dict[str, object]]) -> Iterator[list[dict[str, object]]]:
        """Each row's answer columns as Ray hands it back."""
        import ray.data

        from ..ray.scale import score_dataset

        args = self.args
        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = True
        context.enable_progress_bars = args.verbose
        states = [{RAY_STATE_COLUMN: json.dumps(r["state"], ensure_ascii=False)} for r in requests]
        scored = score_dataset(
            ray.data.from_items(states),
            self.questions,
            model=self.given,
            state_column=RAY_STATE_COLUMN,
            state_json=True,
            batch_size=args.batch_size,
            concurrency=args.concurrency,
            min_confidence=args.min_confidence,
            device=args.device,
        )
        yield from _scored_rows(scored.iter_rows(), len(requests))


def _scored_rows(
    scored: Iterable[dict[str, object]], expected: int
) -> Iterator[list[dict[str, object]]]:
    """Ray's rows without the state column, one at a time; as many as were sent."""
    count = 0
    for answers in scored:
        count += 1
        yield [{k: v for k, v in answers.items() if k != RAY_STATE_COLUMN}]
    if count != expected:
        raise RuntimeError(f"Ray returned {count} rows for {expected}")


def _start_ray(ray: ModuleType, verbose: bool) -> None:
    """``ray.init``, with Ray's Python loggers (configured when ``ray.data`` is imported, so set
    after it) at error level and its workers' logs kept off the terminal, unless ``--verbose``.
    Ray's C++ core still writes its own error-level lines to stderr."""
    if not verbose:
        for name in ("ray", "ray.data", "ray.serve"):
            logging.getLogger(name).setLevel(logging.ERROR)
    ray.init(
        include_dashboard=False,
        ignore_reinit_error=True,
        log_to_driver=verbose,
        logging_level=logging.INFO if verbose else logging.ERROR,
    )
