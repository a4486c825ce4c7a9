"""Benchmarks run by ``legid bench NAME``."""
