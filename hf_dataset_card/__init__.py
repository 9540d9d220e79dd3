"""The dataset card template, installed as ``medhorizon_tasks.hf_dataset_card`` so that ``build-dataset``
finds it in any kind of install (the same arrangement as ``task_yaml``)."""
