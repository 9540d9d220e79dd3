import pandas as pd


def infer_data_job_video(model, work_dir, model_name, dataset, result_file=None, **kwargs):
    predictions = [model.generate(message=dataset.build_prompt(line, video_llm=False), dataset=dataset.dataset_name)
                   for _, line in dataset.data.iterrows()]
    out = pd.DataFrame({"index": dataset.data["index"], "prediction": predictions})
    out.to_csv(result_file, sep="\t", index=False)
    return model
