"""Training and evaluation in the published checkpoint format: ``laya train``, ``laya eval``,
``laya calibrate``, and the metrics and data they share (docs/training.md, docs/calibration.md)."""
