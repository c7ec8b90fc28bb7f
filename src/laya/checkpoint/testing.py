"""Random, offline checkpoints in the published laya format, for testing without downloads.

``random_checkpoint(path)`` writes a directory that ``laya.load(path)`` reads exactly like a published
checkpoint (``rl_agent_config.json``, fp16 ``model.safetensors``, ``encoder/config.json``,
``tokenizer/``), but with random weights and a small built-in English WordPiece vocabulary. Use it to
test hooks, pipelines, serving code and performance without fetching gigabytes from the Hub: the
answers are meaningless, the shapes, keys, token budgets and code paths are the real ones::

    import laya
    from laya.testing import random_checkpoint

    agent = laya.load(str(random_checkpoint(tmp_path / "ckpt")), device="cpu")
    agent.system_one("hello", {"q": {"type": "noul", "instructions": "is it a greeting?"}})

Torch, transformers and tokenizers are imported only when a checkpoint is built.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    import torch
    from transformers import PretrainedConfig, PreTrainedTokenizerFast
    from typing_extensions import Unpack

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
HUB_IDS = {"modernbert": "answerdotai/ModernBERT-base", "bert": "bert-base-uncased"}
MODEL_MAX_LENGTH = 8192


class CheckpointShape(TypedDict, total=False):
    """The shape of a :func:`random_checkpoint`: its encoder (a transformers model type, its
    width, depth, heads, MLP width, embedding rows, initialisation and any other key of
    ``encoder/config.json`` in ``encoder_config``), head layers, token budgets, act costs,
    temperatures, vocabulary ``words`` and random ``seed``."""

    encoder: str
    hidden_size: int
    layers: int
    heads: int
    intermediate_size: int | None
    head_layers: int
    vocab_size: int | None
    max_len: int
    head_max_len: int
    act_costs: Mapping[str, float] | None
    temperature: Iterable[float]
    temperature_by_options: Mapping[str, float] | None
    seed: int
    words: Iterable[str] | None
    initializer_range: float
    encoder_config: Mapping[str, object] | None


class RandomCheckpointOptions(CheckpointShape, total=False):
    """:class:`CheckpointShape` and keys of ``rl_agent_config.json`` written as given (any
    other keyword is written there too)."""

    option_layout: str
    amp_dtype: str
    recommended_min_confidence: float | None
    languages: list[str]
    fine_tuned: bool
    training: dict[str, object]
    cost_wrong_act: float


def random_checkpoint(path: str | Path, **options: Unpack[RandomCheckpointOptions]) -> Path:
    """Write a randomly initialised checkpoint to ``path`` and return it as a ``Path``.

    ``encoder`` is a transformers model type ("modernbert", the default, "bert", or any other
    ``AutoModel`` type); ``hidden_size`` 64, ``layers`` 2, ``heads`` 4, ``head_layers`` 1,
    ``max_len`` 128 and ``head_max_len`` 48 unless given. ``intermediate_size`` defaults to
    1.5 x hidden for ModernBERT and 4 x hidden otherwise; ``vocab_size`` (embedding rows)
    defaults to the tokenizer's size and may be larger, for a realistic embedding cost;
    ``initializer_range`` is 0.5. ``act_costs`` defaults to ``{"escalate": 0.1}`` (two act
    outputs, as published), ``temperature`` to ``(1.0, 1.0, 1.0)``. ``words`` replaces the
    built-in word list. ``encoder_config`` overrides keys of ``encoder/config.json`` (e.g.
    ``{"dtype": "bfloat16"}``); every keyword not of :class:`CheckpointShape` adds or overrides
    a key of ``rl_agent_config.json`` (e.g. ``option_layout="parallel"``). The same arguments
    always give the same bytes; the global torch RNG is left untouched.
    """
    # what is left once the shape's keys are taken out is written to rl_agent_config.json
    root = Path(path)
    encoder, seed = options.pop("encoder", "modernbert"), options.pop("seed", 0)
    head_layers, costs = options.pop("head_layers", 1), options.pop("act_costs", None)
    act_costs = {"escalate": 0.1} if costs is None else dict(costs)
    tokenizer = _write_tokenizer(root / "tokenizer", _vocabulary(options.pop("words", None)))
    vocab_size = options.pop("vocab_size", None)
    rows = len(tokenizer) if vocab_size is None else vocab_size
    if rows < len(tokenizer):
        raise ValueError(
            f"vocab_size={rows} is smaller than the tokenizer ({len(tokenizer)} tokens)"
        )
    fields = {
        "vocab_size": rows,
        "hidden_size": options.pop("hidden_size", 64),
        "num_hidden_layers": options.pop("layers", 2),
        "num_attention_heads": options.pop("heads", 4),
        "intermediate_size": options.pop("intermediate_size", None),
        "initializer_range": options.pop("initializer_range", 0.5),
        **(options.pop("encoder_config", None) or {}),
    }
    max_len, head_max_len = options.pop("max_len", 128), options.pop("head_max_len", 48)
    ecfg = _encoder_config(encoder, tokenizer, max_len, fields)
    ecfg.save_pretrained(root / "encoder")
    _write_weights(root / "model.safetensors", ecfg, head_layers, len(act_costs) + 1, seed)
    temperature = [float(t) for t in options.pop("temperature", (1.0, 1.0, 1.0))]
    by_options = dict(options.pop("temperature_by_options", None) or {})
    agent_config = {
        "encoder": HUB_IDS.get(encoder, encoder),
        "head_layers": head_layers,
        "act_costs": act_costs,
        "max_len": max_len,
        "head_max_len": head_max_len,
        "amp_dtype": "bf16",
        "temperature": temperature,
        "temperature_by_options": by_options,
        **options,
    }
    _write_json(root / "rl_agent_config.json", agent_config)
    return root


def _vocabulary(words: Iterable[str] | None) -> dict[str, int]:
    """Explicit, sorted WordPiece vocabulary: specials, words, single characters, ``##`` pieces."""
    if words is None:
        from ..lang._words import TEXT

        words = TEXT.split()
    chars = sorted(set(string.ascii_lowercase + string.digits + string.punctuation))
    whole = sorted({w.strip().lower() for w in words} - set(chars) - set(SPECIAL_TOKENS) - {""})
    pieces = ["##" + c for c in string.ascii_lowercase + string.digits]
    tokens = [*SPECIAL_TOKENS, *whole, *chars, *pieces]
    return {token: i for i, token in enumerate(tokens)}


def _write_tokenizer(directory: Path, vocab: dict[str, int]) -> PreTrainedTokenizerFast:
    """Build the BERT-style fast tokenizer, save it, and return it."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    backend.normalizer = normalizers.BertNormalizer(lowercase=True)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.decoder = decoders.WordPiece()
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token="[PAD]",
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=MODEL_MAX_LENGTH,
    )
    tokenizer.save_pretrained(directory)
    _portable_tokenizer_config(directory / "tokenizer_config.json")
    return tokenizer


def _portable_tokenizer_config(file: Path) -> None:
    """Name the class ``PreTrainedTokenizerFast`` (transformers 5 writes ``TokenizersBackend``)."""
    config = json.loads(file.read_text(encoding="utf-8"))
    config["tokenizer_class"] = "PreTrainedTokenizerFast"
    config.pop("backend", None)
    config.pop("is_local", None)
    _write_json(file, config)


def _encoder_config(
    model_type: str, tokenizer: PreTrainedTokenizerFast, max_len: int, fields: dict[str, object]
) -> PretrainedConfig:
    """The encoder's transformers config, with the tokenizer's special-token ids."""
    from transformers import AutoConfig

    fields = dict(fields)
    modernbert = model_type == "modernbert"
    hidden = fields["hidden_size"]
    if fields.get("intermediate_size") is None and isinstance(hidden, int):
        fields["intermediate_size"] = hidden * (3 if modernbert else 8) // 2
    # learned position tables get room for RoBERTa-style offsets (positions start at pad id + 1)
    positions = MODEL_MAX_LENGTH if modernbert else max(512, max_len + 2)
    fields.setdefault("max_position_embeddings", positions)
    fields.setdefault("pad_token_id", tokenizer.pad_token_id)
    if modernbert:
        cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
        for key, value in {"cls": cls, "sep": sep, "bos": cls, "eos": sep}.items():
            fields.setdefault(f"{key}_token_id", value)
    return AutoConfig.for_model(model_type, **fields)


def _write_weights(
    file: Path, ecfg: PretrainedConfig, head_layers: int, n_act: int, seed: int
) -> None:
    """Initialise every tensor of the decision model from ``seed`` and save them as fp16."""
    import torch
    from safetensors.torch import save_file

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        tensors = _random_tensors(ecfg, head_layers, n_act)
    fp16 = {k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in tensors.items()}
    save_file(fp16, str(file))


def _random_tensors(
    ecfg: PretrainedConfig, head_layers: int, n_act: int
) -> dict[str, torch.Tensor]:
    """The DecisionModel state dict (docs/training.md) with fresh random initialisation."""
    import copy

    import torch
    from torch import nn
    from transformers import AutoModel

    d = ecfg.hidden_size
    parts: dict[str, nn.Module] = {"encoder": AutoModel.from_config(copy.deepcopy(ecfg))}
    for i in range(head_layers):
        parts[f"head.layers.{i}"] = nn.TransformerEncoderLayer(
            d, max(1, d // 64), 4 * d, 0.1, batch_first=True, norm_first=True
        )
    scorer = (nn.LayerNorm(d), nn.Linear(d, d), nn.GELU(), nn.Linear(d, 1))
    with torch.no_grad():
        scorer[3].weight.mul_(30.0)  # spread the option logits so probabilities are not uniform
    parts["scorer"] = nn.Sequential(*scorer)
    parts["act_head"] = nn.Sequential(nn.Linear(d + 4, 256), nn.GELU(), nn.Linear(256, n_act))
    tensors = {
        f"{prefix}.{name}": value.detach()
        for prefix, module in parts.items()
        for name, value in module.state_dict().items()
    }
    tensors["type_emb.weight"] = torch.randn(3, d)
    tensors["temperature"] = torch.ones(3)
    return tensors


def _write_json(file: Path, data: Mapping[str, object]) -> None:
    """Write ``data`` as indented JSON, creating the parent directory."""
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
