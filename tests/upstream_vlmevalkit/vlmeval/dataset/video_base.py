import os

import numpy as np
import pandas as pd

from ..smp import LMUDataRoot


class VideoBaseDataset:
    MODALITY = "VIDEO"

    def __init__(self, dataset="MMBench-Video", pack=False, nframe=0, fps=-1):
        self.dataset_name = dataset
        ret = self.prepare_dataset(dataset)
        self.frame_root = os.path.join(LMUDataRoot(), "images", dataset)
        os.makedirs(self.frame_root, exist_ok=True)
        self.data_root = ret["root"]
        self.data_file = ret["data_file"]
        self.data = pd.read_csv(self.data_file, sep="\t")
        if "index" not in self.data:
            self.data["index"] = np.arange(len(self.data))
        self.videos = sorted(set(self.data["video"]))
        self.pack, self.nframe, self.fps = pack, nframe, fps
        if self.fps > 0 and self.nframe > 0:
            raise ValueError("fps and nframe should not be set at the same time")

    def __len__(self):
        return len(self.data)
