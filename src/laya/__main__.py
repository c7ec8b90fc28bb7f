"""``python -m laya``: the ``laya`` command."""

from .cli import main

raise SystemExit(main())
