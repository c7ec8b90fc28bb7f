"""The files laya's commands read and write (docs/cli.md, "Files in and out").

* :mod:`~laya.files.atomic` writes a whole file through a temporary file of ``tempfile``'s in the
  same folder (no predictable name, never through a symbolic link), with the umask's mode or the
  replaced file's own, and removes the temporary file on every way out.
* :mod:`~laya.files.row_input` reads a command's rows (JSONL, CSV, Parquet by extension) and
  keeps account of the rows it cannot use (:class:`~laya.files.row_input.BadRows`).
* :mod:`~laya.files.row_output` writes answered rows as they come (JSONL, CSV, Parquet), with a
  run file beside the output that ``--resume`` checks and continues from.
* :mod:`~laya.files.parquet` is the one place that imports pyarrow (the ``parquet`` extra).
"""
