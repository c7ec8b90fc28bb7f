"""Fine-tune a decision model on labelled decisions and write a checkpoint ``laya.load`` reads.

The model sees exactly the rows inference builds (``build_heads`` / ``encode_rows`` /
``pack_rows``). Loss: cross-entropy over each question's option markers (plus optional Brier
and an option-binding term that teaches each marker its option's text), with choice questions
augmented by option shuffles and neutral A/B/C labels so answers do not depend on where or how
an option is listed; the first ``warmup_epochs`` epochs add synthetic warm-up questions
(``laya.training.warmup_data``). Temperatures are fitted on the dev split per type and option-count bucket;
every finished epoch is saved under ``OUT/.train`` so a run resumes, and with a dev split the
epoch with the best dev accuracy is the one written.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import random
import re
import shutil
import string
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np
import torch
import torch.nn.functional as F

from ..checkpoint import (
    ARTIFACTS,
    Tokenizer,
    check_path,
    load_tokenizer,
    locate,
    parse_tokenizer,
    read_config,
    resolve_source,
)
from ..engine.backends.torch import DecisionModel, build_model, load_weights, resolve_device
from ..engine.decoding import Temperatures
from ..engine.encoding import Pass, Row, build_heads, encode_rows, pack_rows, tokenize_states
from ..engine.fitting import fit_grid_temperatures
from ..engine.questions import Label, Question, QuestionId, parse_question
from ..errors import CheckpointError, InvalidRequest
from .evaluate import Example, Record, read_decisions, summarise
from .losses import Rlcd, rlcd_loss
from .option_binding import OptionBinding
from .pairs import pair_groups, pair_loss, partners, split_passes
from .run_files import (
    best_path,
    check_out,
    check_positions,
    load_state,
    removed_on_failure,
    save_atomically,
    save_state,
    sha256,
    write_checkpoint,
)
from .train_settings import TrainOptions, TrainSettings
from .warmup_data import warmup_examples

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "TrainSettings",
    "base_directory",
    "freeze_encoder_layers",
    "optimizer_for",
    "run_epoch",
    "train",
]

HEAD_LAYERS = 2
Batch = TypeVar("Batch")
HEAD_MAX_LEN = 96
ACT_COSTS = {"escalate": 0.5}
ACT_WEIGHT = 0.1
WARMUP_SHARE = 0.06
SHUFFLE_P = 0.5
RENAME_P = 0.15
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
)
# What a plain transformers encoder on the Hub needs besides its weights (model.safetensors).
ENCODER_FILES = ("config.json", *TOKENIZER_FILES)
ENCODER_LAYER = re.compile(r"^encoder\.(?:encoder\.)?layers?\.(\d+)\.")


# --------------------------------------------------------------------------- base model


def base_directory(base: str | Path, token: str | None = None) -> Path:
    """The directory of a training base: a directory as given; otherwise a checkpoint name or
    Hub id, found through the one resolver (``checkpoint.resolve_source``) and fetched into the
    Hugging Face cache with ``token``, as ``laya.load`` does (a plain encoder's files included)."""
    check_path(base, "--base")
    repo, subfolder = resolve_source(base)
    path = locate(repo, subfolder, token, artifacts=ARTIFACTS + ENCODER_FILES, name=str(base))
    if not (path / "rl_agent_config.json").is_file() and not (path / "config.json").is_file():
        raise InvalidRequest(
            f"base {str(base)!r}: {path} is neither a Laya checkpoint (rl_agent_config.json) nor "
            "a transformers encoder (config.json); pass one of those as --base"
        )
    return path


def _prepare(
    base: Path, out: Path, encoder_id: str | None, max_len: int, head_max_len: int | None
) -> tuple[DecisionModel, dict[str, Any]]:
    """Copy the tokenizer and encoder config into ``out``; return (model, config dict)."""
    laya_base = (base / "rl_agent_config.json").is_file()
    tok_src = base / "tokenizer" if laya_base else base
    (out / "tokenizer").mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        if (tok_src / name).is_file():
            shutil.copyfile(tok_src / name, out / "tokenizer" / name)
    _portable_tokenizer_config(out / "tokenizer" / "tokenizer_config.json")
    (out / "encoder").mkdir(exist_ok=True)
    if laya_base:
        cfg = read_config(base, str(base))
        if cfg.option_layout != "sequential":
            raise CheckpointError(
                f"{base}: laya train builds rows in the sequential option layout, and this "
                f"checkpoint uses option_layout={cfg.option_layout!r}; fine-tune a sequential "
                "checkpoint (docs/agent.md#option-layouts)"
            )
        model = build_model(base, cfg)
        load_weights(model, base / "model.safetensors", str(base))
        shutil.copyfile(base / "encoder" / "config.json", out / "encoder" / "config.json")
        config = {k: v for k, v in cfg.raw.items() if k != "training"}
    else:
        model = _new_model(base)
        model.encoder.config.save_pretrained(out / "encoder")
        config = {"encoder": encoder_id or base.name, "head_layers": HEAD_LAYERS}
        config.update(act_costs=dict(ACT_COSTS), temperature=[1.0, 1.0, 1.0])
    if encoder_id:
        config["encoder"] = encoder_id
    config["max_len"] = max_len
    config["head_max_len"] = head_max_len or config.get("head_max_len", HEAD_MAX_LEN)
    return model.float(), config


def _portable_tokenizer_config(path: Path) -> None:
    """Name a usable class where transformers 5 wrote ``TokenizersBackend`` (docs/training.md)."""
    if not path.is_file():
        return
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("tokenizer_class") in (None, "TokenizersBackend"):
        data["tokenizer_class"] = "PreTrainedTokenizerFast"
        data.pop("backend", None)
        data.pop("is_local", None)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _new_model(base: Path) -> DecisionModel:
    """A plain transformers encoder with a fresh decision head that starts as the identity.

    The head layers' residual projections start at zero, so the scorer first reads the encoder's
    own marker states instead of a random mixture of every token.
    """
    from transformers import AutoModel

    encoder = AutoModel.from_pretrained(str(base), attn_implementation="sdpa", dtype=torch.float32)
    model = DecisionModel(encoder, encoder.config.hidden_size, HEAD_LAYERS, len(ACT_COSTS) + 1)
    torch.nn.init.normal_(model.type_emb.weight, std=0.02)
    for layer in [] if model.head is None else model.head.transformer_layers:
        for projection in (layer.self_attn.out_proj, layer.linear2):
            torch.nn.init.zeros_(projection.weight)
            torch.nn.init.zeros_(projection.bias)
    _start_marker_as_bullet(model, base)
    return model


def _start_marker_as_bullet(model: DecisionModel, base: Path) -> None:
    """Copy the ``*`` embedding into ``[MASK]``: an encoder never trained on ``[MASK]`` (like a
    sentence-embedding model) gives every marker almost the same state, a bullet does not."""
    if not (base / "tokenizer.json").is_file():
        return
    tok = parse_tokenizer(base)
    bullet = tok.backend.token_to_id("*")
    if bullet is None:
        return
    table = model.encoder.get_input_embeddings().get_parameter("weight")
    with torch.no_grad():
        table[tok.mask_id] = table[bullet]


def freeze_encoder_layers(model: DecisionModel, layers: int) -> None:
    """Freeze the embeddings and the first ``layers`` encoder layers (no gradient, less compute)."""
    if layers <= 0:
        return
    for name, param in model.named_parameters():
        match = ENCODER_LAYER.match(name)
        if name.startswith("encoder.embeddings.") or (match and int(match[1]) < layers):
            param.requires_grad_(False)


# --------------------------------------------------------------------------- rows


def _variant(rng: random.Random, raw: dict[str, Any], gold: Label) -> tuple[dict[str, Any], Label]:
    """A choice question with its options shuffled and/or relabelled A, B, C (descriptions kept)."""
    criteria = raw["criteria"]  # a list or dict: the question was parsed
    items = list(criteria.items()) if isinstance(criteria, dict) else [(c, None) for c in criteria]
    if rng.random() < SHUFFLE_P:
        rng.shuffle(items)
    if rng.random() < RENAME_P and len(items) <= len(string.ascii_uppercase):
        letters = dict(zip((label for label, _ in items), string.ascii_uppercase))
        gold = letters[gold]
        items = [(letters[label], desc or str(label)) for label, desc in items]
    if isinstance(criteria, dict) or any(desc is not None for _, desc in items):
        criteria = dict(items)
    else:
        criteria = [label for label, _ in items]
    return {**raw, "criteria": criteria}, gold


def _encode(
    tok: Tokenizer,
    examples: Sequence[Example],
    max_len: int,
    head_max_len: int,
    rng: random.Random | None = None,
) -> tuple[list[Row], list[int], list[Question]]:
    """Rows of every (state, question) pair, the gold slot of each, and its Question."""
    rows, targets, questions = [], [], []
    for ex in examples:
        qs = []
        for q, gold in zip(ex.questions, ex.gold):
            if rng is not None and q.type == "choice" and ex.pair is None:
                raw, label = _variant(rng, ex.raw_questions[q.qid], q.keys[gold])
                q = parse_question(q.qid, raw)
                gold = q.keys.index(label)
            qs.append(q)
            targets.append(q.order.index(gold))
        heads = build_heads(tok, qs, head_max_len)
        try:
            found = encode_rows(
                tok, qs, heads, tokenize_states(tok, [ex.state]), max_len, head_max_len
            )
        except ValueError as exc:
            raise InvalidRequest(f"{ex.where}: {exc}") from exc
        rows.extend(found)
        questions.extend(qs)
    return rows, targets, questions


def _tensors(batch: Pass, device: torch.device) -> list[torch.Tensor]:
    """The pass's arrays, padded as ``DecisionModel.forward`` reads them, as tensors on ``device``."""
    arrays = (*batch.padded(), batch.marker_pos, batch.marker_mask, batch.qtype)
    return [torch.from_numpy(a).to(device) for a in arrays]


def _batches(rows: list[Row], pad_id: int, batch_size: int, max_len: int) -> list[Pass]:
    return pack_rows(rows, pad_id, batch_size * max_len, batch_size)


# --------------------------------------------------------------------------- optimisation


def _loss(
    logits: torch.Tensor,
    act: torch.Tensor,
    target: torch.Tensor,
    brier_weight: float,
    rl: tuple[Rlcd, float, torch.Tensor, torch.Tensor] | None = None,
) -> torch.Tensor:
    """Log loss over the markers, or with ``rl`` (RLCD, this epoch's noise, the rows' option
    mask and question types) the RLCD objective, whose soft cross-entropy on a one-gold target is
    that log loss; + Brier, plus the act head learning P(answer is right)."""
    if rl is None:
        loss = F.cross_entropy(logits, target)
    else:
        rlcd, sigma, mask, qtype = rl
        gold = F.one_hot(target, logits.shape[-1]).float()
        loss = rlcd_loss(logits, gold, mask, qtype, sigma, rlcd.samples)
    if brier_weight:
        p = logits.softmax(-1)
        loss = loss + brier_weight * ((p - F.one_hot(target, p.shape[-1])) ** 2).sum(-1).mean()
    if act.shape[-1] >= 2:
        wrong = (logits.detach().argmax(-1) != target).long()
        loss = loss + ACT_WEIGHT * F.cross_entropy(act, wrong)
    return loss


def optimizer_for(
    model: DecisionModel,
    lr: float,
    head_lr: float,
    total_steps: int,
    weight_decay: float,
    min_lr: float | None = None,
) -> tuple[torch.optim.AdamW, torch.optim.lr_scheduler.LambdaLR]:
    """AdamW (encoder at ``lr``, head at ``head_lr``), a linear warm-up, then a linear decay to
    zero, or with ``min_lr`` a cosine decay to it (the published fine-tuning schedule)."""
    trainable = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    encoder = [p for name, p in trainable if name.startswith("encoder.")]
    head = [p for name, p in trainable if not name.startswith("encoder.")]
    optimizer = torch.optim.AdamW(
        [{"params": encoder, "lr": lr}, {"params": head, "lr": head_lr}], weight_decay=weight_decay
    )
    warmup = max(1, int(WARMUP_SHARE * total_steps))

    def decay(step: int) -> float:
        """The share of the way from the peak to the end, 0 at the peak."""
        return min(1.0, max(0.0, (step - warmup) / max(1, total_steps - warmup)))

    def factor(peak: float) -> Callable[[int], float]:
        floor = 0.0 if min_lr is None else min(1.0, min_lr / peak)

        def at(step: int) -> float:
            if step < warmup:
                return (step + 1) / warmup
            if min_lr is None:
                return 1.0 - decay(step)
            return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * decay(step)))

        return at

    factors = [factor(lr), factor(head_lr)]
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, factors)


def _row_keys(examples: Sequence[Example]) -> list[tuple[str, QuestionId] | None]:
    """(pair id, question id) of every row ``_encode`` builds; None outside minimal pairs."""
    return [(ex.pair, q.qid) if ex.pair else None for ex in examples for q in ex.questions]


# the Brier weight, the option binding, its weight, the pair weight, RLCD with this epoch's noise
LossTerms = tuple[float, OptionBinding | None, float, float, tuple[Rlcd, float] | None]


class ProgressBar(Protocol):
    """What :func:`run_epoch` reports to: a tqdm bar, or a silent one."""

    def update(self, n: int) -> None: ...

    def set_postfix(self, **values: str) -> None: ...


def _batch_loss(
    model: DecisionModel,
    rows: Sequence[Row],
    targets: Sequence[int],
    partner: dict[int, list[int]],
    terms: LossTerms,
    batch: Pass,
) -> torch.Tensor:
    """The training loss of one batch, with the option-binding and minimal-pair terms when on
    (``terms``: the Brier weight, the option binding, its weight, the pair weight, and RLCD with
    this epoch's noise or None)."""
    brier_weight, binding, bind_weight, pair_weight, rlcd = terms
    device = model.get_buffer("temperature").device
    input_ids, attention_mask, *rest = _tensors(batch, device)
    h = model.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    logits, act = model.decide(h, attention_mask, *rest)
    gold = torch.tensor([targets[r] for r in batch.rows], device=device)
    _, marker_mask, qtype = rest
    rl = None if rlcd is None else (rlcd[0], rlcd[1], marker_mask, qtype)
    loss = _loss(logits, act, gold, brier_weight, rl)
    if binding is not None:
        loss = loss + bind_weight * binding.loss(h, batch, rows)
    contrast = pair_loss(logits, batch, targets, partner) if pair_weight and partner else None
    if contrast is not None:
        loss = loss + pair_weight * contrast
    return loss


def run_epoch(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    batches: Sequence[Batch],
    loss_of: Callable[[Batch], torch.Tensor],
    bar: ProgressBar,
    grad_clip: float,
) -> float:
    """One pass over the batches; returns the mean training loss."""
    model.train()
    total = 0.0
    for step, batch in enumerate(batches, start=1):
        loss = loss_of(batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        scheduler.step()
        total += loss.item()
        bar.update(1)
        bar.set_postfix(loss=f"{total / step:.4f}")
    return total / max(1, len(batches))


# --------------------------------------------------------------------------- temperatures


@torch.no_grad()
def _dev_logits(
    model: DecisionModel, rows: list[Row], pad_id: int, batch_size: int, max_len: int
) -> list[np.ndarray]:
    """Raw marker logits (slot order) of every dev row."""
    model.eval()
    logits: dict[int, np.ndarray] = {}
    for batch in _batches(rows, pad_id, batch_size * 2, max_len):
        out, _ = model(*_tensors(batch, model.get_buffer("temperature").device))
        out = out.cpu().numpy().astype(np.float64)
        for j, r in enumerate(batch.rows):
            logits[r] = out[j, : len(rows[r].markers)]
    return [logits[r] for r in range(len(rows))]


def _accuracy(logits: list[np.ndarray], targets: list[int]) -> float:
    """Share of answers whose top option is the gold one (temperatures do not change it)."""
    return float(np.mean([int(np.argmax(z)) == y for z, y in zip(logits, targets)]))


def _dev_records(
    logits: Sequence[np.ndarray],
    targets: Sequence[int],
    questions: Sequence[Question],
    by_type: Sequence[float],
    by_bucket: dict[str, float],
    examples: Sequence[Example],
) -> list[Record]:
    """Dev answers as metric records (criteria order) under the fitted temperatures."""
    domains = [ex.domain for ex in examples for _ in ex.questions]
    temperatures = Temperatures(tuple(by_type), by_bucket)
    records = []
    for z, y, q, domain in zip(logits, targets, questions, domains):
        t = temperatures.for_question(q)
        p = np.exp(z / t - (z / t).max())
        canonical = np.empty_like(p)
        canonical[list(q.order)] = p / p.sum()
        records.append(Record(q.type, domain, canonical, q.order[y]))
    return records


# --------------------------------------------------------------------------- entry points


def _set_determinism(seed: int, threads: int | None, device: torch.device) -> None:
    """Seed torch and ask for deterministic kernels (on CUDA, only where they exist)."""
    if threads:
        torch.set_num_threads(threads)
    if device.type == "cuda":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.manual_seed(seed)
    try:
        torch.use_deterministic_algorithms(True, warn_only=device.type != "cpu")
    except RuntimeError:  # pragma: no cover - depends on the torch build
        warnings.warn("laya train: deterministic algorithms unavailable", RuntimeWarning, 2)


def train(
    data: str | Path | Sequence[str | Path],
    base: str | Path,
    out: str | Path,
    settings: TrainSettings | None = None,
    **options: Unpack[TrainOptions],
) -> Path:
    """Fine-tune ``base`` (a Laya checkpoint or a plain encoder) on ``data``; returns ``out``.

    ``settings`` (a :class:`~laya.training.train_settings.TrainSettings`; its defaults when
    absent), with any of its fields given again as keywords (``epochs=5``), say how. With
    ``dev``, dev accuracy is measured after every epoch and, unless ``keep_best`` is off,
    the checkpoint written is the epoch with the best dev accuracy (early stopping). ``device``
    is a torch device ("cpu", the default, or "cuda"); the checkpoint written is the same format.
    The first ``warmup_epochs`` epochs also train on synthetic warm-up questions drawn from the
    training states (``laya.training.warmup_data``), which shortens the plateau of a fresh head. ``data`` may
    be several files (read in order); rows sharing a ``pair`` id are minimal pairs, trained in one
    pass with a contrastive term of weight ``pair_weight`` (``laya.training.pairs``). ``languages`` (e.g.
    ``["en"]``) is written to the config, so answers on other languages carry a warning.
    ``weight_decay`` is AdamW's, ``grad_clip`` the gradient norm clipped at every step.
    ``rlcd`` trains on the RLCD objective instead of the log loss (``laya.training.losses``;
    ``finetune``'s default, docs/training.md); ``min_lr`` makes the learning rates decay on a
    cosine to it instead of linearly to zero.
    """
    from tqdm.auto import tqdm

    if settings is not None and not isinstance(settings, TrainSettings):
        raise InvalidRequest(
            f"settings must be a TrainSettings, got {settings!r}; the options after out are "
            "keywords (epochs=3, lr=5e-5, ...)"
        )
    s = dataclasses.replace(settings or TrainSettings(), **options)
    files = [Path(data)] if isinstance(data, (str, Path)) else [Path(d) for d in data]
    base, out = base_directory(base), Path(out)
    check_out(out, base)
    examples = [ex for path in files for ex in read_decisions(path)]
    dev_examples = read_decisions(s.dev) if s.dev else []
    where = resolve_device(s.device or "cpu", strict=True)
    _set_determinism(s.seed, s.threads, where)
    with removed_on_failure(out):
        model, config = _prepare(base, out, s.encoder_id, s.max_len, s.head_max_len)
        check_positions(out, s.max_len)
        model.to(where)
        freeze_encoder_layers(model, s.freeze_layers)
        tok = load_tokenizer(out, config["encoder"])
        hml = config["head_max_len"]
        # every dev row must fit before training starts; they are the same after every epoch
        dev_rows, dev_targets, dev_questions = _encode(tok, dev_examples, s.max_len, hml)
        rows_per_epoch = len(_encode(tok, examples, s.max_len, hml)[0])
    warm = _warmup_sets(examples, s.seed, min(s.warmup_epochs, s.epochs))
    epoch_steps = [
        -(-(rows_per_epoch + sum(len(ex.questions) for ex in warm.get(epoch, []))) // s.batch_size)
        for epoch in range(1, s.epochs + 1)
    ]
    head_lr = s.lr if s.head_lr is None else s.head_lr
    optimizer, scheduler = optimizer_for(
        model, s.lr, head_lr, sum(epoch_steps), s.weight_decay, s.min_lr
    )
    binding = OptionBinding(model.encoder, tok) if s.bind_weight else None
    fingerprint = _fingerprint(files, base, s, hml, head_lr)
    state = load_state(out, fingerprint) if s.resume else None
    history: list[float] = []
    dev_history: list[float] = []
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng"])
        history, dev_history = state["history"], state.get("dev_history", [])
    chosen = None  # dev logits of the epoch that will be written, when this run computed them
    done = sum(epoch_steps[: len(history)])
    bar = tqdm(total=sum(epoch_steps), initial=done, disable=not s.progress, unit="step")
    for epoch in range(len(history) + 1, s.epochs + 1):
        seen = [*examples, *warm.get(epoch, [])]
        rows, targets, _ = _encode(tok, seen, s.max_len, hml, random.Random(s.seed * 1000 + epoch))
        groups = pair_groups(_row_keys(seen), targets)
        batches = split_passes(rows, groups, tok.pad_id, s.batch_size, s.max_len)
        random.Random(s.seed * 1000 + epoch).shuffle(batches)
        if binding is not None:
            binding.embed(rows)
        rl = None if s.rlcd is None else (s.rlcd, s.rlcd.sigma(epoch, s.epochs))
        terms = (s.brier_weight, binding, s.bind_weight, s.pair_weight, rl)
        loss_of = functools.partial(_batch_loss, model, rows, targets, partners(groups), terms)
        bar.set_description(f"epoch {epoch}/{s.epochs}")
        history.append(run_epoch(model, optimizer, scheduler, batches, loss_of, bar, s.grad_clip))
        if dev_examples:
            logits = _dev_logits(model, dev_rows, tok.pad_id, s.batch_size, s.max_len)
            dev_history.append(_accuracy(logits, dev_targets))
            improved = dev_history[-1] > max(dev_history[:-1], default=-1.0)
            if s.keep_best and improved:
                save_atomically(model.state_dict(), best_path(out))
            if improved or not s.keep_best:
                chosen = logits
            if s.progress:
                bar.write(
                    f"epoch {epoch}: loss {history[-1]:.4f}, dev accuracy {dev_history[-1]:.4f}"
                )
        extra = {"fingerprint": fingerprint, "history": history, "dev_history": dev_history}
        save_state(out, epoch, model, optimizer, scheduler, {**extra, "epoch": epoch})
    bar.close()
    metrics: dict[str, Any] = {"train_loss": [round(x, 4) for x in history]}
    if dev_examples:
        metrics["dev_accuracy"] = [round(x, 4) for x in dev_history]
        if s.keep_best:
            model.load_state_dict(torch.load(best_path(out), map_location=where, weights_only=True))
            metrics["best_epoch"] = int(np.argmax(dev_history)) + 1
        if chosen is None:
            chosen = _dev_logits(model, dev_rows, tok.pad_id, s.batch_size, s.max_len)
        by_type, by_bucket, nll = fit_grid_temperatures(
            chosen,
            dev_targets,
            dev_questions,
            config.get("temperature"),
            config.get("temperature_by_options"),
        )
        config["temperature"], config["temperature_by_options"] = by_type, by_bucket
        records = _dev_records(chosen, dev_targets, dev_questions, by_type, by_bucket, dev_examples)
        summary = summarise(records)
        metrics["dev"] = {"nll": nll, **{k: v for k, v in summary.items() if k != "by_domain"}}
    if s.languages:
        config["languages"] = list(s.languages)
    config["fine_tuned"] = True
    config["training"] = {
        **fingerprint,
        "base": str(base),
        "dev_sha256": sha256(Path(s.dev)) if s.dev else None,
        "examples": len(examples),
        "metrics": metrics,
    }
    write_checkpoint(model, out, config)
    return out


def _fingerprint(
    files: list[Path], base: Path, s: TrainSettings, head_max_len: int, head_lr: float
) -> dict[str, object]:
    """What a run's saved state must match to be resumed (and what the config records of it);
    the settings added later are written only when they are not their old fixed values."""
    return {
        "data_sha256": sha256(files[0]) if len(files) == 1 else [sha256(f) for f in files],
        "base": str(base.resolve()),
        "epochs": s.epochs,
        "seed": s.seed,
        "lr": s.lr,
        "batch_size": s.batch_size,
        "max_len": s.max_len,
        "head_max_len": head_max_len,
        "brier_weight": s.brier_weight,
        "freeze_layers": s.freeze_layers,
        "head_lr": head_lr,
        "bind_weight": s.bind_weight,
        "keep_best": s.keep_best,
        "warmup_epochs": s.warmup_epochs,
        **({"pair_weight": s.pair_weight} if s.pair_weight else {}),
        **({"weight_decay": s.weight_decay} if s.weight_decay != 0.01 else {}),
        **({"grad_clip": s.grad_clip} if s.grad_clip != 1.0 else {}),
        **({"rlcd": dataclasses.asdict(s.rlcd)} if s.rlcd is not None else {}),
        **({"min_lr": s.min_lr} if s.min_lr is not None else {}),
    }


def _warmup_sets(examples: list[Example], seed: int, epochs: int) -> dict[int, list[Example]]:
    """Each warm-up epoch's synthetic questions, drawn up front so the step count is known."""
    return {
        epoch: warmup_examples(examples, random.Random(f"laya-warmup-{seed}-{epoch}"))
        for epoch in range(1, epochs + 1)
    }
