"""``python -m laya``: the ``laya`` command."""

from .cli.command import main

raise SystemExit(main())
