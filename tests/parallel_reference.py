"""An independent reading of the parallel option layout, for golden values (docs/agent.md#option-layouts).

It re-implements the published runtime's contract from its description alone and imports
nothing of laya but ``laya.testing`` (which builds the checkpoint): the rows (a question's head
and a state), each token's position and option id, a stock transformers encoder called with
explicit ``position_ids`` and prepared 4-D boolean masks, the decision head on stock PyTorch
layers, and decoding. Rows run one at a time, so no padding is involved.

``python tests/parallel_reference.py`` rebuilds ``tests/fixtures/tiny-parallel``: the checkpoint
(``laya.testing.random_checkpoint`` with the arguments in :data:`CHECKPOINT`) and ``cases.json``
(the calls in :data:`CASES` with this module's results), byte for byte the same on the same
torch and transformers (it was made with torch 2.13 and transformers 5.25). If they change,
replace the ``./tiny-parallel`` lines of ``tests/fixtures/SHA256SUMS`` with the output of
``cd tests/fixtures && find ./tiny-parallel -type f | sort | xargs sha256sum``.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "tiny-parallel"
WORDS = (
    "a about account all and answer are billed by can cancel charge charged customer day "
    "department double every everything else fix for from handle hello help how i invoice "
    "invoices is issue it leave login march my new no not now of on or order our outage "
    "outages payment payments plan please pricing purchase purchases refund refunds sales "
    "should soon statement support system technical the this threaten threatens to today "
    "twice urgent user wants was we which will with yes you"
)
CHECKPOINT = {
    "option_layout": "parallel",
    "words": WORDS.split(),
    "encoder_config": {"local_attention": 16},  # a sliding window of 8 positions each side
    "temperature": (1.3, 0.8, 1.1),
    "temperature_by_options": {"choice:3-5": 1.6, "noul:2": 1.2},
    "seed": 7,
}
DEFAULT_NOUL = ("no, the statement does not hold", "yes, the statement holds")
OPTION_TOKENS = 48


# --------------------------------------------------------------------------- rows


def render(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def option_texts(q: dict) -> list[str]:
    """Option i's text, in option-index order."""
    criteria = q.get("criteria")
    if q["type"] == "choice":
        pairs = criteria.items() if isinstance(criteria, dict) else [(c, None) for c in criteria]
        return [f"{label}" if d in (None, "") else f"{label}: {render(d)}" for label, d in pairs]
    if q["type"] == "score":
        return [f"level {i}: {render(level)}" for i, level in enumerate(criteria)]
    criteria = {str(k).lower(): v for k, v in (criteria or {}).items()}
    labels = {k: v.strip() for k, v in q.get("labels", {"false": "false", "true": "true"}).items()}
    texts = []
    for key, default in zip(("false", "true"), DEFAULT_NOUL):
        text = criteria.get(key)
        texts.append(f"{labels[key]}: {default if text in (None, '') else render(text)}")
    return texts


class Reference:
    """A parallel-layout checkpoint read from its files with stock transformers and PyTorch."""

    def __init__(self, directory: Path) -> None:
        from safetensors.torch import load_file
        from transformers import AutoConfig, AutoModel, AutoTokenizer

        self.config = json.loads((directory / "rl_agent_config.json").read_text())
        assert self.config["option_layout"] == "parallel"
        self.tok = AutoTokenizer.from_pretrained(str(directory / "tokenizer"))
        weights = {k: v.float() for k, v in load_file(str(directory / "model.safetensors")).items()}
        ecfg = AutoConfig.from_pretrained(str(directory / "encoder"))
        self.encoder = AutoModel.from_config(ecfg, attn_implementation="sdpa").float().eval()
        self.encoder.load_state_dict(_part(weights, "encoder."))
        d = ecfg.hidden_size
        self.layers = []
        for i in range(self.config["head_layers"]):
            layer = nn.TransformerEncoderLayer(
                d, max(1, d // 64), 4 * d, 0.1, batch_first=True, norm_first=True
            )
            layer.load_state_dict(_part(weights, f"head.layers.{i}."))
            self.layers.append(layer.eval())
        self.w = weights

    def encode(self, text: str) -> list[int]:
        text = text.replace(self.tok.mask_token, " ")
        return self.tok(text, add_special_tokens=False)["input_ids"]

    def head(self, q: dict, head_max_len: int) -> tuple[list[int], list[int], int, int | None]:
        """(ids, markers, distinct options, tokens per option) of a question's head."""
        texts = option_texts(q)
        order = q.get("option_order", list(range(len(texts))))
        options = [
            [self.tok.mask_token_id, *self.encode(" " + texts[o])[:OPTION_TOKENS]] for o in order
        ]
        budget = head_max_len - sum(len(o) for o in options)
        per = None
        if budget < 16:
            per = max(4, (head_max_len - 16) // max(1, len(options)))
            options = [o[:per] for o in options]
            budget = head_max_len - sum(len(o) for o in options)
        ids = [self.tok.cls_token_id]
        ids += self.encode(f"{q['type']} question: {q['instructions']}")[: max(8, budget)]
        ids.append(self.tok.sep_token_id)
        markers = []
        for o in options:
            markers.append(len(ids))
            ids += o
        ids.append(self.tok.sep_token_id)
        return ids, markers, len({tuple(o) for o in options}), per

    # ----------------------------------------------------------------------- the layout

    @staticmethod
    def layout(ids: list[int], markers: list[int], head_len: int) -> tuple[list[int], list[int]]:
        """Each token's position and option id, token by token."""
        start = markers[0]
        bounds = [*markers, head_len - 1]
        longest = max(bounds[s + 1] - bounds[s] for s in range(len(markers)))
        positions, options = [], []
        for i in range(len(ids)):
            if i < start:
                positions.append(i)
                options.append(0)
            elif i < head_len - 1:
                slot = max(s for s in range(len(markers)) if markers[s] <= i)
                positions.append(start + i - markers[slot])
                options.append(slot + 1)
            else:
                positions.append(start + longest + i - (head_len - 1))
                options.append(0)
        return positions, options

    def masks(self, positions: torch.Tensor, options: torch.Tensor) -> Any:
        """Boolean [1, 1, L, L] masks: no query sees another slot's option tokens; a sliding
        layer sees positions within the window; a mapping for encoders with layer types."""
        oq, ok = options[:, None], options[None, :]
        full = ~((oq > 0) & (ok > 0) & (oq != ok))
        config = self.encoder.config
        if not getattr(config, "layer_types", None):
            return full[None, None]
        window = config.sliding_window
        sliding = full & ((positions[:, None] - positions[None, :]).abs() <= window)
        return {"full_attention": full[None, None], "sliding_attention": sliding[None, None]}

    # ----------------------------------------------------------------------- the model

    @torch.no_grad()
    def forward(self, ids: list[int], markers: list[int], head_len: int, qtype: int, max_len: int):
        positions, options = self.layout(ids, markers, head_len)
        ids, positions, options = ids[:max_len], positions[:max_len], options[:max_len]
        pos, opt = torch.tensor(positions), torch.tensor(options)
        h = self.encoder(
            input_ids=torch.tensor([ids]),
            attention_mask=self.masks(pos, opt),
            position_ids=pos[None],
        ).last_hidden_state
        h = h + self.w["type_emb.weight"][qtype]
        for layer in self.layers:
            h = layer(h, src_key_padding_mask=torch.zeros(1, len(ids), dtype=torch.bool))
        m = h[0, markers]
        x = F.layer_norm(m, (m.shape[-1],), self.w["scorer.0.weight"], self.w["scorer.0.bias"])
        x = F.gelu(F.linear(x, self.w["scorer.1.weight"], self.w["scorer.1.bias"]))
        logits = F.linear(x, self.w["scorer.3.weight"], self.w["scorer.3.bias"])[:, 0]
        p = logits.softmax(-1)
        kk = max(2, len(markers))
        entropy = -(p * p.clamp(min=1e-9).log()).sum() / math.log(kk)
        top = sorted(p.tolist(), reverse=True) + [0.0]
        features = torch.tensor([top[0], top[0] - top[1], float(entropy), kk / 255])
        a = F.gelu(
            F.linear(
                torch.cat([h[0, 0], features]),
                self.w["act_head.0.weight"],
                self.w["act_head.0.bias"],
            )
        )
        act = F.linear(a, self.w["act_head.2.weight"], self.w["act_head.2.bias"])
        return logits.numpy().astype(np.float32), float(act.softmax(-1)[0])

    # ----------------------------------------------------------------------- calls

    def predict_batch(self, states: list, questions: dict, max_len=None, head_max_len=None):
        max_len = max_len or self.config["max_len"]
        head_max_len = head_max_len or self.config["head_max_len"]
        return [self._one(s, questions, max_len, head_max_len) for s in states]

    def system_one(self, state: Any, questions: dict, **budgets: Any) -> dict:
        return self.predict_batch([state], questions, **budgets)[0]

    def _one(self, state: Any, questions: dict, max_len: int, head_max_len: int) -> dict:
        text = state if isinstance(state, str) else json.dumps(state, ensure_ascii=False)
        tokens = self.encode(text)
        answers, usage = {}, {"input_tokens": 0, "output_tokens": 0, "state_tokens": len(tokens)}
        dropped, cut, collisions = 0, [], {}
        for qid, q in questions.items():
            head, markers, distinct, per = self.head(q, head_max_len)
            room = max(0, max_len - len(head) - 1)
            kept = [] if room == 0 else tokens[-room:] if isinstance(state, list) else tokens[:room]
            full = head + kept + [self.tok.sep_token_id]
            qtype = ("choice", "score", "noul").index(q["type"])
            logits, act = self.forward(full, markers, len(head), qtype, max_len)
            answers[qid] = self.decode(q, logits, act)
            usage["input_tokens"] += min(len(full), max_len)
            dropped = max(dropped, len(tokens) - len(kept))
            if len(kept) < len(tokens):
                cut.append(qid)
            if distinct < len(markers):
                collisions[qid] = {
                    "total": len(markers),
                    "distinct": distinct,
                    "tokens_per_option": per,
                }
        usage.update(state_tokens_dropped=dropped, truncated=dropped > 0, truncated_questions=cut)
        if collisions:
            usage["options"] = collisions
        return {"model": "laya-rl-agent", "answers": answers, "usage": usage}

    def temperature(self, q: dict, k: int) -> float:
        size = "2" if k <= 2 else "3-5" if k <= 5 else "6-10" if k <= 10 else "11+"
        qtype = ("choice", "score", "noul").index(q["type"])
        by_options = self.config.get("temperature_by_options") or {}
        return _clamp(by_options.get(f"{q['type']}:{size}", self.config["temperature"][qtype]))

    def decode(self, q: dict, logits: np.ndarray, act: float) -> dict:
        k = len(logits)
        z = logits / np.float32(self.temperature(q, k))
        p = np.exp(z - z.max())
        p = p / p.sum()
        order = q.get("option_order", list(range(k)))
        canonical = np.zeros_like(p)
        for s, o in enumerate(order):
            canonical[o] = p[s]
        p = canonical
        top = round(float(np.clip(p.max(), 0, 1)), 4)
        action = {"act_probability": round(act, 4)}
        if q["type"] == "noul":
            yes = float(p[1])
            return {
                "type": "noul",
                "noul": round(yes, 4),
                "confidence": round(max(yes, 1 - yes), 4),
                "answer_confidence": top,
                "action": action,
            }
        h = -np.sum(p * np.log(np.clip(p, 1e-12, 1)), dtype=np.float32)
        confidence = 1.0 if k < 2 else round(float(np.clip(1 - h / np.log(k), 0, 1)), 4)
        if q["type"] == "score":
            levels = q["criteria"]
            return {
                "type": "score",
                "score": round(float(sum(i * float(v) for i, v in enumerate(p))), 4),
                "legend": {str(i): render(v) for i, v in enumerate(levels)},
                "probabilities": {str(i): round(float(v), 4) for i, v in enumerate(p)},
                "confidence": confidence,
                "answer_confidence": top,
                "action": action,
            }
        labels = list(q["criteria"])
        return {
            "type": "choice",
            "choice": labels[int(np.argmax(p))],
            "probabilities": {label: round(float(v), 4) for label, v in zip(labels, p)},
            "confidence": confidence,
            "answer_confidence": top,
            "action": action,
        }


def _part(weights: dict, prefix: str) -> dict:
    return {k[len(prefix) :]: v for k, v in weights.items() if k.startswith(prefix)}


def _clamp(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 1.0
    return (
        1.0 if isinstance(value, bool) or not math.isfinite(number) else min(5.0, max(0.5, number))
    )


def run(reference: Reference, case: dict) -> dict | list:
    """A case's call on the reference."""
    budgets = {k: case[k] for k in ("max_len", "head_max_len") if k in case}
    if case["call"] == "predict_batch":
        return reference.predict_batch(case["states"], case["questions"], **budgets)
    return reference.system_one(case["state"], case["questions"], **budgets)


# --------------------------------------------------------------------------- the fixture

ROUTING = {
    "department": {
        "type": "choice",
        "instructions": "Which department should handle this?",
        "criteria": {
            "billing": "invoices, payments, refunds",
            "technical": "bugs, outages, system errors",
            "sales": "pricing, new purchases",
            "other": "",
        },
    },
    "urgency": {
        "type": "score",
        "instructions": "How urgent is this?",
        "criteria": ["not urgent", "soon", "blocking"],
    },
    "churn_risk": {"type": "noul", "instructions": "Does the user threaten to cancel or leave?"},
}
BILLING = "Hi, we were billed twice for March. Please refund the duplicate today or we will cancel our plan."
CASES: list[dict] = [
    {"call": "system_one", "state": BILLING, "questions": ROUTING},
    {
        "call": "system_one",
        "state": BILLING,
        "questions": {
            **ROUTING,
            "department": {**ROUTING["department"], "option_order": [2, 0, 3, 1]},
            "urgency": {**ROUTING["urgency"], "option_order": [1, 2, 0]},
        },
    },
    {
        "call": "system_one",
        "state": "The login page shows an outage error every day.",
        "questions": {
            "kind": {
                "type": "choice",
                "instructions": "What is it?",
                "criteria": ["bug", "question", "praise"],
            },
            "angry": {
                "type": "noul",
                "instructions": "Is the customer angry?",
                "labels": {"false": "calm", "true": "angry"},
                "criteria": {"true": "the customer is upset"},
            },
            "single": {
                "type": "choice",
                "instructions": "Only one?",
                "criteria": {"yes": "one option"},
            },
        },
    },
    {
        "call": "system_one",
        "state": {"subject": "refund", "body": "charged twice", "order": 42},
        "questions": {
            "topic": {
                "type": "choice",
                "instructions": "Which topic is this about?",
                "criteria": {f"t{i}": f"subject number {i} of the account" for i in range(12)},
            }
        },
    },
    {
        "call": "predict_batch",
        "states": [
            BILLING,
            "thanks, all good now",
            ["hello", "my invoice was charged twice", "please fix it today " * 20],
            "refund " * 150,
        ],
        "questions": ROUTING,
    },
    {
        "call": "system_one",
        "state": BILLING,
        "questions": {"department": ROUTING["department"]},
        "max_len": 26,  # the head alone is 27 tokens: its closing separator is cut
        "head_max_len": 20,
    },
]


def build(target: Path = FIXTURE) -> None:
    """Write the fixture: the checkpoint and the reference's results for :data:`CASES`."""
    from laya.checkpoint.testing import random_checkpoint

    shutil.rmtree(target, ignore_errors=True)
    checkpoint = random_checkpoint(target / "checkpoint", **CHECKPOINT)
    reference = Reference(checkpoint)
    cases = [{**case, "expected": run(reference, case)} for case in CASES]
    text = json.dumps(cases, indent=1, ensure_ascii=False) + "\n"
    (target / "cases.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else FIXTURE)
