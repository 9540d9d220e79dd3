"""Embedded data: the synthetic MedHorizon-layout benchmark and its visual code."""
