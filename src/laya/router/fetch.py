"""Whether a Router may download a checkpoint it does not have, and when.

* ``"inline"`` (the Python default): building a checkpoint downloads what is missing, in the
  call that needs it, as ``laya.load`` does.
* ``"never"`` (``laya serve``'s default): only what is on disk or already in the Hugging Face
  cache is built; anything else is :class:`~laya.errors.CheckpointUnavailable` at once, and no
  request ever starts a download.
* ``"background"`` (``laya serve --allow-downloads``): a missing checkpoint starts one download
  in a background thread; calls get ``CheckpointUnavailable`` (with ``retry_after``) until it has
  landed in the cache, then build from it. No call waits on the network.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from pathlib import Path

from ..checkpoint import Source, cached_checkpoint, locate, looks_like_path, resolve_source
from ..errors import CheckpointUnavailable, InvalidRequest
from .names import display_source

__all__ = ["DOWNLOADS", "Fetcher"]

DOWNLOADS = ("inline", "background", "never")
RETRY_AFTER_S = 30.0


class Fetcher:
    """Where a Router builds a checkpoint from, under its download policy."""

    def __init__(self, mode: str, token: str | None = None) -> None:
        if mode not in DOWNLOADS:
            raise InvalidRequest(f"downloads must be one of {', '.join(DOWNLOADS)}, got {mode!r}")
        self.mode, self.token = mode, token
        self._lock = threading.Lock()
        self._jobs: dict[str, tuple[Future[Path], float]] = {}

    def source(self, key: str, source: Source, revision: str | None) -> Source:
        """The source to build ``key`` from now: its own, or its complete copy in the cache."""
        repo, sub = source
        if self.mode == "inline" or looks_like_path(repo) or Path(repo).expanduser().is_dir():
            return source  # a path is built from where it is, or reported missing as a path
        cached = cached_checkpoint(*resolve_source(repo, sub), revision)
        if cached is not None:
            return str(cached), None
        where = display_source(source)
        if self.mode == "never":
            raise CheckpointUnavailable(
                f"checkpoint {key!r} ({where}) is not available on this server: it is not "
                "loaded, not in the local Hugging Face cache, and downloads are off; choose "
                "another model, serve the bundled offline model with --model mini, or restart "
                "with --allow-downloads (LAYA_ALLOW_DOWNLOADS=1; Router(downloads='background') "
                "in Python)",
                reason="not in the local cache, and downloads are off",
            )
        raise self._downloading(key, source, revision, where)

    def _downloading(
        self, key: str, source: Source, revision: str | None, where: str
    ) -> CheckpointUnavailable:
        """Start (or look at) the background download of ``key``; the error a caller gets now."""
        with self._lock:
            job = self._jobs.get(key)
            previous = job[0].exception() if job is not None and job[0].done() else None
            if job is None or previous is not None:
                job = self._jobs[key] = (self._start(key, source, revision), time.monotonic())
                if previous is not None:
                    reason = " ".join(str(previous).split())[:300]
                    return CheckpointUnavailable(
                        f"checkpoint {key!r} ({where}) failed to download ({reason}); "
                        "downloading it again in the background: retry later",
                        retry_after=RETRY_AFTER_S,
                    )
        waited = time.monotonic() - job[1]
        return CheckpointUnavailable(
            f"checkpoint {key!r} ({where}) is downloading in the background (for {waited:.0f} s "
            "so far); retry in a while",
            reason="downloading",
            retry_after=RETRY_AFTER_S,
        )

    def _start(self, key: str, source: Source, revision: str | None) -> Future[Path]:
        future: Future[Path] = Future()
        repo, sub = source

        def download() -> None:
            try:
                future.set_result(locate(repo, sub, self.token, revision, name=key))
            except BaseException as exc:  # noqa: BLE001 - kept for the next caller to see
                future.set_exception(exc)

        threading.Thread(target=download, name=f"laya-download-{key}", daemon=True).start()
        return future
