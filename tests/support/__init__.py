"""Test helpers shared across test modules (e.g. the scripted OpenAI-compatible server)."""
