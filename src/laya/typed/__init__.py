"""Typed decisions: questions from a schema (pydantic, dataclass, TypedDict, JSON schema), answers
projected back onto it (a :class:`Decision`, or plain values as the published runtime's
``decide`` returns them), the preset question sets, and the one-liners (docs/decide.md)."""

from .decisions import Decision, DecisionRunner, FieldDecision, decision, decision_batch

__all__ = ["Decision", "DecisionRunner", "FieldDecision", "decision", "decision_batch"]
