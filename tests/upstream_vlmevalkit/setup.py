from setuptools import find_packages, setup

setup(name="vlmeval", version="0.1.0", description="a VLMEvalKit-shaped checkout for the tests",
      packages=find_packages(exclude=["test*"]), python_requires=">=3.7")
