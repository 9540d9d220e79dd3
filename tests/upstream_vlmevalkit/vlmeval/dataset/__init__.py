import rouge_score  # noqa: F401  (upstream imports it for its text metrics and does not require it)

from .video_base import VideoBaseDataset  # noqa: F401

DATASET_CLASSES = []
SUPPORTED_DATASETS = []


def build_dataset(name, **kwargs):
    from .video_dataset_config import supported_video_datasets

    return supported_video_datasets[name](**kwargs)
