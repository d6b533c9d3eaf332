"""kaudit: audit action-taking LLM agents by the damage they leave in real state."""

__version__ = "0.1.0"
