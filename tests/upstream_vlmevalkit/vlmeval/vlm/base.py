class BaseModel:
    INTERLEAVE = False

    def __init__(self):
        pass

    def generate(self, message, dataset=None):
        return self.generate_inner(message, dataset)
