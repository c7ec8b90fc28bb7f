"""Quieter exports: the exporter and the quantizer log notes a user of ``laya export-onnx`` cannot act on."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

__all__ = ["quiet_logger"]


@contextlib.contextmanager
def quiet_logger(name: str = "") -> Iterator[None]:
    """Errors only from logger ``name`` (the root logger by default) meanwhile: the exporter
    warns about optional packages it does not need (torchvision), the quantizer suggests a
    pre-processing step for image models."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
