supported_VLM = {}
