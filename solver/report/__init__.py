"""Rendering plans and estimates for people (rich tables) and programs (JSON)."""
