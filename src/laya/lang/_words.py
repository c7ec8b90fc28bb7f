"""Common English words (whitespace-separated, ``words.txt``): the whole-word vocabulary of
``laya.testing`` and the English list of ``laya.lang``."""

from importlib.resources import files

TEXT = "\n" + files("laya.lang").joinpath("words.txt").read_text(encoding="utf-8")
