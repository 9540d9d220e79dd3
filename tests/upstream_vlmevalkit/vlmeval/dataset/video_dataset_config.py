supported_video_datasets = {}
