"""Inbound email as a state: the body without quoted replies, signatures and disclaimers.

A reply carries the whole thread below it, a signature and often a legal footer; the model reads
the first ``max_len`` tokens, so that noise costs tokens and can decide the answer. The cleaner
reads English, Portuguese, Spanish and French mail clients' conventions. It pairs with
:func:`laya.typed.presets.email_questions` (docs/agent.md); this is also the published runtime's
``laya.email`` path (docs/migrating.md).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["clean_email_body", "email_state"]

# A reply header: "On Mon, 3 Jun 2024, Ana <ana@x.org> wrote:" and its translations.
_ATTRIBUTION = re.compile(
    r"^\s*(on|em|el|le)\b.{0,200}?\b(wrote|escreveu|escribi[oó]|a\s+[ée]crit)\s*:\s*$",
    re.IGNORECASE | re.DOTALL,
)
_FORWARD_RULE = re.compile(
    r"^\s*-{2,}\s*(original message|forwarded message|begin forwarded message|mensagem original|"
    r"mensagem encaminhada|mensaje original|mensaje reenviado|message d'origine|"
    r"message transf[ée]r[ée]|message original)\s*-{0,}\s*$",
    re.IGNORECASE,
)
_UNDERSCORE_RULE = re.compile(r"^\s*_{10,}\s*$")
_HEADER_FROM = re.compile(r"^\s*(from|de|von)\s*:\s*\S", re.IGNORECASE)
_HEADER_NEXT = re.compile(
    r"^\s*(sent|date|to|cc|subject|enviado|data|para|assunto|fecha|asunto|envoy[ée]|[àa]|objet)"
    r"\s*:",
    re.IGNORECASE,
)
_SIGNATURE_RULE = re.compile(r"^\s*--\s*$")


def _closing_line(words: str) -> re.Pattern[str]:
    """A line that is only one of ``words`` (alternatives), perhaps with a comma or a stop."""
    return re.compile(rf"^\s*({words})\s*[,!.]?\s*$", re.IGNORECASE)


_SIGN_OFF = _closing_line(
    "thanks|thank you|many thanks|best|best regards|kind regards|regards|warm regards|"
    "cheers|sincerely|yours truly|all the best"
)
_CLOSING = _closing_line(
    "atenciosamente|cumprimentos|abra[çc]os|obrigad[oa]|saludos|un saludo|"
    "saludos cordiales|atentamente|cordialmente|cordialement|bien cordialement|"
    "bien [àa] vous|sinc[eè]res salutations"
)
_DEVICE_FOOTER = re.compile(
    r"^\s*(sent from my|sent from outlook|get outlook for|enviado do meu|enviado desde mi|"
    r"envoy[ée] de mon|envoy[ée] depuis mon)\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"^\s*[A-ZÀ-Ý][\w'.-]*(\s+[A-ZÀ-Ý][\w'.-]*){0,3}\s*$")
_BOILERPLATE = re.compile(
    r"((e-?mail|message|communication|mensagem|mensaje|correo|courriel)\b[^.!?]{0,120}"
    r"\b(confidential|privileged|confidencial|confidentiel)"
    r"|intended (solely|only) for|not the intended recipient|received (this|the) "
    r"(e-?mail|message) in error|before printing|print(ing)? this e-?mail"
    r"|recebeu esta mensagem por (engano|erro)|n[ãa]o (for|é) o destinat[áa]rio"
    r"|recibido este (mensaje|correo) por error|no (es|sea) el destinatario"
    r"|antes de imprimir|re[çc]u ce (message|courriel) par erreur"
    r"|n'[êe]tes pas le destinataire|avant d'imprimer)",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_SPACES = re.compile(r"[ \t\u00a0]+")
_BLANK_RUN = re.compile(r"\n{3,}")
_SIGNATURE_ZONE = 0.4  # a signature is looked for in the last 40 % of the lines,
_SIGNATURE_LINES = 4  # and at least in the last four


def clean_email_body(body: str, max_chars: int = 3000) -> str:
    """The part of an email body a decision should read: quoted replies and forwarded threads
    cut, ``>`` lines dropped, a trailing signature or device footer cut, confidentiality and
    print-the-environment sentences removed, spaces collapsed; then ``[:max_chars]`` (so 0 gives
    ``""`` and a negative budget trims from the end, as a slice does)."""
    if not isinstance(body, str):
        raise TypeError(f"body must be a string, got {type(body).__name__}")
    if isinstance(max_chars, bool) or not isinstance(max_chars, int):
        raise TypeError(f"max_chars must be an integer, got {max_chars!r}")
    text = unicodedata.normalize("NFC", body).replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\\n", "\n")
    if max_chars > 0:
        text = text[: 4 * max_chars]
    lines = _before_thread(text.split("\n"))
    lines = [_SPACES.sub(" ", line).strip() for line in lines if not line.lstrip().startswith(">")]
    lines = _without_signature(_without_boilerplate("\n".join(lines)).split("\n"))
    return _BLANK_RUN.sub("\n\n", "\n".join(lines)).strip()[:max_chars]


def _before_thread(lines: list[str]) -> list[str]:
    """The lines before the first reply or forward header that follows some content."""
    seen_content = False
    for i, line in enumerate(lines):
        if seen_content and _starts_thread(lines, i):
            return lines[:i]
        seen_content = seen_content or bool(line.strip())
    return lines


def _starts_thread(lines: list[str], i: int) -> bool:
    line = lines[i]
    if _FORWARD_RULE.match(line) or _UNDERSCORE_RULE.match(line):
        return True
    wrapped = " ".join(part.strip() for part in lines[i : i + 2])
    if _ATTRIBUTION.match(line) or (
        len(line) < 200
        and _ATTRIBUTION.match(wrapped)
        and line.strip().lower().startswith(("on ", "em ", "el ", "le "))
    ):
        return True
    following = [nxt for nxt in lines[i + 1 : i + 4] if nxt.strip()]
    return bool(_HEADER_FROM.match(line) and following and _HEADER_NEXT.match(following[0]))


def _without_signature(lines: list[str]) -> list[str]:
    """Cut at a signature in the last lines of the message: ``--``, a device footer, a closing,
    or a short sign-off followed by a name (never the whole message)."""
    content = [i for i, line in enumerate(lines) if line.strip()]
    if not content:
        return lines
    zone = max(_SIGNATURE_LINES, round(len(content) * _SIGNATURE_ZONE))
    start = content[max(0, len(content) - zone)]
    for i in range(start, len(lines)):
        line = lines[i]
        if _SIGNATURE_RULE.match(line) or _DEVICE_FOOTER.match(line) or _CLOSING.match(line):
            return lines[:i] if any(x.strip() for x in lines[:i]) else lines
        if _SIGN_OFF.match(line):
            after = [x for x in lines[i + 1 :] if x.strip()]
            if after and _NAME.match(after[0]) and any(x.strip() for x in lines[:i]):
                return lines[:i]
    return lines


def _without_boilerplate(text: str) -> str:
    """Drop disclaimer sentences; a paragraph goes when every sentence of it is one."""
    kept = []
    for paragraph in text.split("\n\n"):
        sentences = _SENTENCE.split(paragraph)
        content = [s for s in sentences if not _BOILERPLATE.search(s)]
        if content:
            kept.append(" ".join(content) if len(content) < len(sentences) else paragraph)
    return "\n\n".join(kept)


def email_state(
    subject: str,
    body: str,
    sender: str | None = None,
    clean: bool = True,
    max_chars: int = 3000,
    **extra: object,
) -> dict[str, object]:
    """A state for an email: ``{"subject", "body", "from"?, **extra}``, the body cleaned by
    :func:`clean_email_body` unless ``clean=False``; a falsy ``sender`` and ``None`` extras are
    left out."""
    state: dict[str, object] = {
        "subject": subject,
        "body": clean_email_body(body, max_chars) if clean else body,
    }
    if sender:
        state["from"] = sender
    state.update({key: value for key, value in extra.items() if value is not None})
    return state
