"""Benchmarks for `make bench`: figures and ratios printed as tables, never asserted in tests."""
