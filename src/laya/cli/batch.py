"""``laya batch IN.jsonl --out OUT.jsonl``: answer questions for every line of a JSONL file.

Each input line is a JSON object; its fields are kept and the answers added (``<q>``,
``<q>_confidence`` per question, and ``result``, the whole result). By default the file is
answered here, through the Router's ``predict_batch`` with the default model unless ``--model``
names another (``auto`` routes), with a progress bar on a terminal, and the command prints one
summary line; ``--ray`` scores it on Ray Data instead (:func:`laya.ray.score_dataset`, the
``ray`` extra), with Ray's own logs silenced unless ``--verbose``. The output is written whole or
not at all.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..commands import (
    chunk_rows,
    command_parser,
    on_terminal,
    progress,
    read_input_text,
    run_command,
)
from ..engine.result import answer_columns
from ..errors import InvalidRequest, TooManyOptions
from .command import fraction, group_size, positive_int
from .render import MANY_OPTIONS_HINT, option_notes

__all__ = ["batch_main", "write_jsonl_atomically"]

CHUNK = 256  # rows per predict_batch call (laya.commands.PROGRESS_STEP while a bar is shown)
RAY_STATE_COLUMN = "_laya_state_json"  # the one column laya batch --ray sends to Ray


def _parser() -> argparse.ArgumentParser:
    parser = command_parser(
        "laya batch",
        "Answer questions for every line of a JSONL file; each line's fields are "
        "kept and the answers added.",
        epilog="Without --preset or --questions the 'router' preset is answered (as laya "
        "--predict does). Lines whose state is empty are refused, naming the line.",
    )
    add = parser.add_argument
    add("input", metavar="INPUT.jsonl", help="one JSON object per line")
    add("output", metavar="OUTPUT.jsonl", nargs="?", help="where to write (or --out)")
    add("--out", "-o", dest="out", metavar="OUTPUT.jsonl", help="where to write, all at once")
    add("--preset", help="a ready-made question set (laya --help lists them)")
    add("--questions", metavar="FILE", help="the questions in a JSON file")
    add(
        "--model",
        metavar="NAME|PATH",
        help="pin a checkpoint (mini: the bundled offline model), or auto (the default): route "
        "each row by language, an undecided one to LAYA_DEFAULT_MODEL, else multilingual",
    )
    add("--calibration", metavar="FILE", help="calibrate the pinned checkpoint with this file")
    add("--state-column", default="state", help="the field holding each line's state")
    add(
        "--batch-size",
        type=positive_int,
        default=64,
        help="rows per forward batch (with --ray: per call)",
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
    """``laya batch``: exit 0 ok, 1 failed while running, 2 usage (nothing written)."""
    return run_command("laya batch", argv, _parser().parse_args, _batch_command)


def _batch_command(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    output = _output(args)
    here_only = [f"--{n}" for n in ("tournament", "shortlist", "calibration") if vars(args)[n]]
    if args.ray and here_only:
        raise InvalidRequest(f"{' and '.join(here_only)} answer here only; drop --ray")
    questions, state_key = _questions(args)
    rows = (_run_ray if args.ray else _run_here)(args, questions, state_key)
    written = write_jsonl_atomically(rows, output)
    print(f"wrote {written} rows to {output} in {time.perf_counter() - started:.1f} s")


def _output(args: argparse.Namespace) -> str:
    """The output path, given once, in a folder that exists (checked before any work)."""
    if bool(args.output) == bool(args.out):
        raise InvalidRequest("give the output file once: laya batch IN.jsonl --out OUT.jsonl")
    output = args.output or args.out
    folder = Path(output).parent
    if not folder.is_dir():
        raise InvalidRequest(f"cannot write {output}: there is no folder {folder}")
    return output


def _questions(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
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


def _read_rows(path: str, column: str) -> list[tuple[int, dict[str, Any]]]:
    """Every non-blank line as (its line number, a JSON object holding ``column``); errors name
    the line."""
    rows = []
    for n, line in enumerate(read_input_text(path, "input file").split("\n"), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise InvalidRequest(f"{path} line {n}: not JSON ({exc})") from None
        if not isinstance(row, dict) or column not in row:
            raise InvalidRequest(f"{path} line {n}: no {column!r} field (pass --state-column)")
        rows.append((n, row))
    if not rows:
        raise InvalidRequest(f"{path}: no lines to answer")
    return rows


def _run_here(
    args: argparse.Namespace, questions: dict[str, Any], state_key: str
) -> Iterable[dict[str, Any]]:
    """Answer the rows on this machine, chunk by chunk, with a progress bar on a terminal."""
    from ..router import Router, pins
    from .command import calibrate, load_routed, pin

    router = Router(device=args.device, default=pins.default_model())
    name = pin(router, args.model, "--model") if args.model else None
    if args.calibration:
        calibrate(router, name, args.calibration)
    rows, requests = _requests(args, questions, state_key, {"model": name} if name else {})
    load_routed(router, requests, args.device)
    return _answered(router, rows, requests, questions, args)


def _requests(
    args: argparse.Namespace,
    questions: dict[str, Any],
    state_key: str,
    pinned: Mapping[str, str | None],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The file's rows and their Router requests, every state checked before any work (an error
    names the line)."""
    from ..router.requests import check_request

    rows, requests = [], []
    for n, row in _read_rows(args.input, args.state_column):
        state = row[args.state_column]
        state = {state_key: state} if isinstance(state, str) else state
        request = {"state": state, "questions": questions, **pinned}
        try:
            check_request(request, f"{args.input} line {n}:")
        except TypeError as exc:
            raise InvalidRequest(str(exc)) from None
        rows.append(row)
        requests.append(request)
    return rows, requests


def _answered(
    router: Any,
    rows: list[dict[str, Any]],
    requests: list[dict[str, Any]],
    questions: dict[str, Any],
    args: argparse.Namespace,
) -> Iterable[dict[str, Any]]:
    shown = on_terminal()
    step = chunk_rows(CHUNK, shown)
    noted: set[str] = set()
    with progress(len(rows), shown=shown) as advance:
        for start in range(0, len(rows), step):
            chunk = requests[start : start + step]
            results = _predict(router, chunk, args)
            _note_many_options(results, noted)
            columns = answer_columns(results, questions)
            for i, row in enumerate(rows[start : start + step]):
                yield {**row, **{name: values[i] for name, values in columns.items()}}
            advance(len(chunk))


def _predict(router: Any, chunk: list[dict[str, Any]], args: argparse.Namespace) -> list[Any]:
    """One predict_batch call; a choice with too many options for one pass says what answers it."""
    try:
        return router.predict_batch(
            chunk,
            batch_size=args.batch_size,
            min_confidence=args.min_confidence,
            tournament=args.tournament,
            shortlist=args.shortlist,
        )
    except TooManyOptions as exc:
        raise InvalidRequest(f"{exc}; or {MANY_OPTIONS_HINT}") from None


def _note_many_options(results: list[Any], noted: set[str]) -> None:
    """Say once per question, on stderr, that its options could not all be told apart."""
    for result in results:
        for note in option_notes(result):
            if note not in noted:
                noted.add(note)
                print(f"laya batch: note: {note}", file=sys.stderr)


def _run_ray(
    args: argparse.Namespace, questions: dict[str, Any], state_key: str
) -> Iterable[dict[str, Any]]:
    """Score the file on Ray Data; Ray's logs and progress bars only with ``--verbose``.

    The file is read and checked here, like without ``--ray``; Ray gets each state as JSON text
    (one Arrow column cannot hold strings, objects and lists, or objects of different keys) and
    hands back the answer columns, which join the rows in input order.
    """
    try:
        import ray
        import ray.data
    except ImportError:
        raise InvalidRequest("--ray needs Ray: pip install 'laya[ray]'") from None

    from ..ray.scale import score_dataset

    rows, requests = _requests(args, questions, state_key, {})
    _start_ray(ray, args.verbose)
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True
    context.enable_progress_bars = args.verbose
    states = [{RAY_STATE_COLUMN: json.dumps(r["state"], ensure_ascii=False)} for r in requests]
    scored = score_dataset(
        ray.data.from_items(states),
        questions,
        model=args.model,
        state_column=RAY_STATE_COLUMN,
        state_json=True,
        batch_size=args.batch_size,
        concurrency=args.concurrency,
        min_confidence=args.min_confidence,
        device=args.device,
    )
    return _joined(rows, scored.iter_rows())


def _joined(
    rows: list[dict[str, Any]], scored: Iterable[dict[str, Any]]
) -> Iterable[dict[str, Any]]:
    """Each input row with the answer columns Ray added to its state."""
    for row, answers in zip(rows, scored, strict=True):
        yield {**row, **{k: v for k, v in answers.items() if k != RAY_STATE_COLUMN}}


def _start_ray(ray: Any, verbose: bool) -> None:
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


def write_jsonl_atomically(rows: Any, path: str, result_column: str = "result") -> int:
    """One JSON object per row into ``path``, via a temporary file: all of it or nothing.

    Returns the number of rows written.
    """
    target = Path(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    count = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for row in rows:
                row = dict(row)
                if isinstance(row.get(result_column), str):
                    row[result_column] = json.loads(row[result_column])
                out.write(json.dumps(row, ensure_ascii=False, default=_plain) + "\n")
                count += 1
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
    return count


def _plain(value: Any) -> Any:
    """numpy values (as Ray hands them back) as plain Python."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
