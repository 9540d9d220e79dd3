"""SurgHiBench: hierarchy-aware phase/step evaluation (Manzano Rodriguez et al., arXiv 2609.27139).

Framework-free core: :mod:`.hierarchy` (the step -> phase DAG, label canonicalisation),
:mod:`.vocab` (shipped MultiBypass140 / GraSP / MIPO hierarchies) and :mod:`.metrics`
(Task 1 recognition, Task 2 cross-level consistency, Task 3 error severity).
"""

from .hierarchy import Hierarchy, canonical, normalize
from .metrics import METRIC_KEYS, dataset_metrics, overall, video_metrics
from .vocab import GRASP, KNOWN_HIERARCHIES, MIPO, MULTIBYPASS140, get_hierarchy

__all__ = ["Hierarchy", "canonical", "normalize", "METRIC_KEYS", "dataset_metrics", "overall", "video_metrics",
           "GRASP", "KNOWN_HIERARCHIES", "MIPO", "MULTIBYPASS140", "get_hierarchy"]
