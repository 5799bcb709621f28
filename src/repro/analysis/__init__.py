"""Analyses over trained runs; each writes a tidy CSV (one row per measurement)."""
