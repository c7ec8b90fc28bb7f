"""Scaling out with Ray: a Ray Serve deployment of ``laya serve`` and Ray Data batch scoring
(docs/scaling.md). Importing this package does not import Ray."""

from .scale import build_app, score_dataset, serve_app, serve_main

__all__ = ["build_app", "score_dataset", "serve_app", "serve_main"]
