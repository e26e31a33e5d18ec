"""fabgen: one intent file in, every config of a GPU-cluster fabric out."""

__version__ = "0.1.0"
