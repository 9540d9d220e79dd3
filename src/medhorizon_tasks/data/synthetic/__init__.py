"""The embedded synthetic benchmarks (MedHorizon, Sureon, SurgHiBench samples in the real schemas),
the visual code their evidence frames carry, and the probe models that read it."""
