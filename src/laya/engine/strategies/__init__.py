"""Ways to answer over an engine: long documents read in windows, tournaments and shortlists for
choices of many options (docs/agent.md, docs/many-options.md)."""
