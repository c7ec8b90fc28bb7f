"""laya's version, the one source: pyproject.toml reads it here and the package root hands it on,
so modules that report it (the server's tracer, the MCP server) need not import the root."""

__version__ = "0.4.16"  # docs/migrating.md, "Version"
