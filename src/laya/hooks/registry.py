"""Where a call's hooks come from: the process-wide defaults, and ``HookRegistry``, the mixin
that gives a runtime or a Router its installed hooks and their policy."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple

from .context import normalise_hooks, validate_timeout

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "HookArguments",
    "HookRegistry",
    "add_default_hook",
    "clear_default_hooks",
    "compose_hooks",
    "default_hooks",
    "set_default_hooks",
]


_defaults_lock = threading.Lock()
_defaults: tuple[object, ...] = ()


def set_default_hooks(
    hooks: object = None, on_predict_start: object = None, on_predict_end: object = None
) -> None:
    """Replace the process-wide hooks that run first on every Agent, Router and ONNXAgent call."""
    global _defaults
    new = tuple(normalise_hooks(hooks, on_predict_start, on_predict_end))
    with _defaults_lock:
        _defaults = new


def add_default_hook(hook: object) -> None:
    """Append one hook object (or a sequence of them) to the process-wide defaults."""
    global _defaults
    new = tuple(normalise_hooks(hook))
    with _defaults_lock:
        _defaults = _defaults + new


def clear_default_hooks() -> None:
    """Remove every process-wide default hook."""
    set_default_hooks()


def default_hooks() -> list[object]:
    """A copy of the current process-wide defaults."""
    return list(_defaults)


def compose_hooks(
    installed: Sequence[object] = (),
    hooks: object = None,
    on_predict_start: object = None,
    on_predict_end: object = None,
) -> list[object]:
    """The effective list of one call: defaults, then installed, then per-call hooks."""
    return (
        list(_defaults) + list(installed) + normalise_hooks(hooks, on_predict_start, on_predict_end)
    )


# --------------------------------------------------------------------------- registry


class HookArguments(NamedTuple):
    """A constructor's hook arguments, in ``HookRegistry.__init__``'s order (an Agent,
    ONNXAgent or Router passes them on as one value)."""

    hooks: object
    on_predict_start: object
    on_predict_end: object
    hooks_raise: bool
    hooks_concurrent: bool
    hooks_timeout: object


class HookRegistry:
    """Mixin giving a runtime its installed hooks, their policy, and thread-safe mutation.

    A class that mixes it in calls ``HookRegistry.__init__`` with the constructor's hook
    arguments before anything else, so bad hook arguments raise first.
    """

    def __init__(
        self,
        hooks: object = None,
        on_predict_start: object = None,
        on_predict_end: object = None,
        hooks_raise: bool = True,
        hooks_concurrent: bool = True,
        hooks_timeout: object = None,
    ) -> None:
        self.hooks: tuple[object, ...] = tuple(
            normalise_hooks(hooks, on_predict_start, on_predict_end)
        )
        self.hooks_raise = bool(hooks_raise)
        self.hooks_concurrent = bool(hooks_concurrent)
        self.hooks_timeout: float | None = validate_timeout(hooks_timeout)
        # hooks_concurrent=False: one re-entrant lock around every hook call of this instance
        self.hooks_lock: threading.RLock | None = (
            None if self.hooks_concurrent else threading.RLock()
        )
        self._hooks_mutex = threading.Lock()

    def add_hook(self, hook: object) -> Self:
        """Install a hook object (or a sequence of them) after construction; returns self."""
        new = tuple(normalise_hooks(hook))
        with self._hooks_mutex:
            self.hooks = tuple(self.hooks) + new
        return self

    def remove_hook(self, hook: object) -> bool:
        """Remove every installed occurrence of ``hook`` (by identity); True if there was one."""
        with self._hooks_mutex:
            kept = tuple(h for h in self.hooks if h is not hook)
            removed = len(kept) != len(self.hooks)
            self.hooks = kept
        return removed

    @contextmanager
    def hooks_installed(self, *hooks: object) -> Iterator[Self]:
        """Install hooks for the block; on exit remove exactly what the block added."""
        added = [h for group in hooks for h in normalise_hooks(group)]
        self.add_hook(added)
        try:
            yield self
        finally:
            with self._hooks_mutex:
                current = list(self.hooks)
                for hook in added:
                    for i in range(len(current) - 1, -1, -1):
                        if current[i] is hook:
                            del current[i]
                            break
                self.hooks = tuple(current)
