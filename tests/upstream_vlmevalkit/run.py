"""VLMEvalKit's entry point, at the checkout root as upstream keeps it: every model on every dataset, the
predictions as a TSV, the dataset's own evaluate(), and a status.json per model."""
import argparse
import datetime
import json
import os

from vlmeval.config import supported_VLM
from vlmeval.dataset import build_dataset
from vlmeval.inference_video import infer_data_job_video


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", nargs="+", required=True)
    p.add_argument("--model", nargs="+", required=True)
    p.add_argument("--work-dir", default="./outputs")
    p.add_argument("--judge", default=None)
    p.add_argument("--mode", default="all")
    p.add_argument("--limit", type=int, default=None)
    return p.parse_args()


def main():
    args = parse_args()
    for model_name in args.model:
        model = supported_VLM[model_name]()
        pred_root = os.path.join(args.work_dir, model_name)
        os.makedirs(pred_root, exist_ok=True)
        status = {"datasets": {}}
        for name in args.data:
            dataset = build_dataset(name)
            result_file = os.path.join(pred_root, f"{model_name}_{name}.tsv")
            model = infer_data_job_video(model, work_dir=pred_root, model_name=model_name, dataset=dataset,
                                         result_file=result_file)
            metrics = dataset.evaluate(result_file, model=args.judge)
            status["datasets"][name] = {"updated_at": datetime.datetime.now().isoformat(),
                                        "prediction_file": result_file, "metrics": metrics}
        with open(os.path.join(pred_root, "status.json"), "w") as fh:
            json.dump(status, fh)


if __name__ == "__main__":
    main()
