"""lmms-eval adapter: task hooks (medhorizon.py) and probe models (models.py)."""
