"""MedHorizon: full-procedure clinical video MCQ (taxonomy, release loader, protocol, scoring)."""
