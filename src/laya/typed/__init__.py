"""Typed decisions: questions from a schema (pydantic, dataclass, TypedDict, JSON schema), answers
projected back onto it, the preset question sets, and the ``laya.decide`` one-liners
(docs/decide.md)."""

from .decisions import Decision, DecisionRunner, FieldDecision, decide, decide_batch

__all__ = ["Decision", "DecisionRunner", "FieldDecision", "decide", "decide_batch"]
