"""Benchmarks: item schema + prompt builder + scorer + report, framework-free."""
