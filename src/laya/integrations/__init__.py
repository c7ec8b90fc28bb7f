"""Adapters for agent frameworks: ``laya.integrations.langchain`` (langchain-core) and
``laya.integrations.llamaindex`` (llama-index-core). Each is imported only when used."""
