"""gpuplan: plan which GPUs to rent, where, how many, on which contract and for how long."""

__version__ = "0.1.0"
