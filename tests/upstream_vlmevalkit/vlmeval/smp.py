import os


def LMUDataRoot():
    root = os.environ.get("LMUData") or os.path.join(os.path.expanduser("~"), "LMUData")
    os.makedirs(root, exist_ok=True)
    return root


def get_rank_and_world_size():
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


def get_pred_file_path(work_dir, model_name, dataset_name):
    return os.path.join(work_dir, f"{model_name}_{dataset_name}.tsv")
