"""pvr-keras: Pointer Value Retrieval tasks, models and experiments for Keras 3."""

__version__ = "0.1.0"
