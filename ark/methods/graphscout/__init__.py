"""Scripted (no-LLM) and model-driven GraphScout pieces: Cypher writing, synthetic checks, prompt sections."""
