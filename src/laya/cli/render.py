"""How results read in a terminal and in tables: routing blocks, answer tables with bars, JSON
pretty or compact, and a batch's answers as columns (``laya batch``, locally and on Ray).

Pure formatting on plain dicts (no torch, no Router), so the command, tests and anything else
that prints results share one rendering.
"""

from __future__ import annotations

import json
import os
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TextIO

__all__ = [
    "BAR_WIDTH",
    "Style",
    "MANY_OPTIONS_HINT",
    "bar",
    "cut",
    "json_text",
    "option_notes",
    "published_cut",
    "show_answers",
    "show_route",
    "route_row",
]

BAR_WIDTH = 20
_EIGHTHS = " ▏▎▍▌▋▊▉"
_MAX_OPTIONS_SHOWN = 8
_LABEL_WIDTH = 28
MANY_OPTIONS_HINT = "answer it with --tournament auto or --shortlist K (docs/many-options.md)"
NONE_OF_THESE = "(none of these)"  # a choice's "abstain" row, and its verdict when it won


@dataclass(frozen=True)
class Style:
    """ANSI colours when writing to a terminal and NO_COLOR is unset; plain text otherwise."""

    colour: bool = False

    @classmethod
    def for_stream(cls, stream: TextIO) -> Style:
        """Colour only for an interactive stream, honouring https://no-color.org."""
        tty = getattr(stream, "isatty", lambda: False)()
        return cls(colour=tty and not os.environ.get("NO_COLOR"))

    def _paint(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour and text else text

    def bold(self, text: str) -> str:
        """Question names and headers."""
        return self._paint(text, "1")

    def dim(self, text: str) -> str:
        """Secondary information."""
        return self._paint(text, "2")

    def good(self, text: str) -> str:
        """The chosen answer."""
        return self._paint(text, "32")

    def warn(self, text: str) -> str:
        """Low-confidence and truncation notes."""
        return self._paint(text, "33")


def bar(p: float, width: int = BAR_WIDTH) -> str:
    """A probability as a bar of block characters, eighth-cell resolution, padded to ``width``."""
    cells = round(min(max(p, 0.0), 1.0) * width * 8)
    full, rest = divmod(cells, 8)
    return ("█" * full + (_EIGHTHS[rest] if rest else "")).ljust(width)


def _columns(char: str) -> int:
    """Terminal cells of one character: wide East Asian forms take two, combining marks none."""
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


def _cells(text: str) -> int:
    return sum(map(_columns, text))


def cut(text: str, limit: int) -> str:
    """One line of at most ``limit`` terminal cells, with an ellipsis where it was cut."""
    text = " ".join(text.split())
    if _cells(text) <= limit:
        return text
    kept, used = [], 1
    for char in text:
        used += _columns(char)
        if used > limit:
            break
        kept.append(char)
    return "".join(kept) + "…"


def _fit(text: str, width: int) -> str:
    """``text`` cut and padded to exactly ``width`` terminal cells."""
    text = cut(text, width)
    return text + " " * (width - _cells(text))


def show_route(decision: Mapping[str, object], style: Style) -> list[str]:
    """The routing block as the published ``laya`` prints it: ``Model     : <name>``,
    ``Reason    : <text>`` and, when detection ran, ``Detected  : <compact JSON>`` (with the
    ``diagnostic`` under ``--explain``)."""
    lines = [
        f"{style.dim('Model     :')} {style.bold(str(decision['model']))}",
        f"{style.dim('Reason    :')} {decision['reason']}",
    ]
    detection = decision.get("detection")
    if detection:
        lines.append(f"{style.dim('Detected  :')} {json.dumps(detection, ensure_ascii=False)}")
    return lines


def route_row(decision: Mapping[str, object], shown: str, style: Style) -> str:
    """One request of a routed batch, as published: ``"%-14s %s  <- %s"`` (model, reason, the
    request cut to 45 characters and ``...``)."""
    model = style.bold(f"{decision['model']:<14}")
    return f"{model} {decision['reason']}  {style.dim('<- ' + published_cut(shown, 45))}"


def published_cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with ``...`` after, as the published ``laya``
    shows a request (a batch line's header cuts at 69, a routed row at 45)."""
    return text if len(text) <= limit else text[:limit] + "..."


Row = tuple[str, float, bool]  # label, probability, whether it is the answer


def show_answers(result: Mapping[str, Any], style: Style) -> list[str]:
    """The routing line, then one table per answer (columns aligned across answers), then notes."""
    routing = result.get("routing") or {}
    source = f" ({routing['repo']})" if routing.get("repo") else ""
    lines = [style.dim(f"→ {routing.get('model', '?')}{source}: {routing.get('reason', '')}"), ""]
    tables = [(str(q), a, *_verdict_and_rows(a)) for q, a in result.get("answers", {}).items()]
    qid_width = max((len(t[0]) for t in tables), default=0)
    widths = (_cells(row[0]) for table in tables for row in table[3])
    label_width = min(max(widths, default=0), _LABEL_WIDTH)
    for qid, answer, verdict, rows in tables:
        lines.append(_header(qid.ljust(qid_width), verdict, answer, style))
        lines += [_row(row, label_width, style) for row in rows]
    lines += [style.warn(f"warning: {w['message']}") for w in result.get("warnings", [])]
    usage = result.get("usage") or {}
    if usage.get("truncated"):
        dropped = usage.get("state_tokens_dropped", 0)
        lines.append(style.warn(f"note: state truncated, {dropped} tokens dropped"))
    lines += [style.warn(f"note: {note}") for note in option_notes(result)]
    return lines


def option_notes(result: Mapping[str, object]) -> list[str]:
    """One note per question whose options could not all be told apart in one pass (the head
    budget cut them to the same tokens), with the flags that answer such a choice."""
    usage = result.get("usage")
    collided = usage.get("options") if isinstance(usage, Mapping) else None
    if not isinstance(collided, Mapping):
        return []
    return [
        f"question {qid!r}: its {s.get('total')} options read as {s.get('distinct')} distinct "
        f"in one pass; {MANY_OPTIONS_HINT}"
        for qid, s in collided.items()
    ]


def json_text(payload: object, style: str) -> str:
    """``payload`` as JSON: one line for ``compact``, else indented (``pretty``, and ``auto``:
    the published output of one request; a batch asks for ``compact``, docs/cli.md)."""
    return json.dumps(payload, ensure_ascii=False, indent=None if style == "compact" else 2)


def _header(qid: str, verdict: str, answer: Mapping[str, object], style: Style) -> str:
    """Question, answer, confidence, and the flags: unsure (under the model's recommended
    threshold: shown as unsure, not as a decision), the gate's low confidence, and with a
    certified calibration file whether it automates (else: for review) and its prediction set."""
    conf = answer.get("confidence")
    conf_text = f"confidence {conf:.2f}" if isinstance(conf, (int, float)) else ""
    flags = [name for name in ("unsure", "low confidence") if answer.get(name.replace(" ", "_"))]
    shown = style.warn(verdict) if answer.get("unsure") else style.good(verdict)
    flag = "".join(style.warn(f"  {name}") for name in flags)
    return f"{style.bold(qid)}  {shown}  {style.dim(conf_text)}{flag}{_automation(answer, style)}"


def _automation(answer: Mapping[str, object], style: Style) -> str:
    """``  automate`` or ``  for review``, and ``  set {a, b}`` when the set holds more than one."""
    automate = answer.get("automate")
    if not isinstance(automate, bool):
        return ""
    text = style.good("  automate") if automate else style.warn("  for review")
    members = answer.get("prediction_set")
    if isinstance(members, list) and len(members) > 1:
        text += style.dim(f"  set {{{', '.join(map(str, members))}}}")
    return text


def _row(row: Row, width: int, style: Style) -> str:
    """One option: label, bar, probability; the answer's row in colour."""
    label, p, chosen = row
    text = f"  {_fit(label, width)}  {bar(p)}  {p:.2f}"
    return style.good(text) if chosen else text


def _verdict_and_rows(answer: dict[str, Any]) -> tuple[str, list[Row]]:
    """The answer in words and the rows of its table."""
    kind = answer.get("type")
    if kind == "noul":
        p = float(answer["noul"])
        return ("yes" if p >= 0.5 else "no"), [("p(true)", p, p >= 0.5)]
    probabilities = {str(k): float(v) for k, v in (answer.get("probabilities") or {}).items()}
    if kind == "score":
        legend = answer.get("legend") or {}
        top = max(probabilities, key=probabilities.__getitem__, default="")
        rows = [(f"{k} {legend.get(k, '')}".strip(), p, k == top) for k, p in probabilities.items()]
        return f"{answer['score']:.2f}, most likely {legend.get(top, top)}", rows
    if kind == "choice":
        choice = answer.get("choice")
        ranked = sorted(probabilities.items(), key=lambda kv: -kv[1])[:_MAX_OPTIONS_SHOWN]
        rows = [(k, p, k == str(choice)) for k, p in ranked]
        if "abstain" in answer:
            rows.append((NONE_OF_THESE, float(answer["abstain"]), choice is None))
        return (NONE_OF_THESE if choice is None else str(choice)), rows
    return json.dumps(answer, ensure_ascii=False), []
