"""``laya mcp``: decisions as Model Context Protocol tools, on the official ``mcp`` SDK
(docs/integrations.md). Importing this package does not import the SDK; its modules do."""
