"""Thin glue between the framework-free benchmarks and evaluation frameworks."""
