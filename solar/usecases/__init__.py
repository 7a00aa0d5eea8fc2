"""The use cases beyond one GPU's headroom: comparing GPUs (compare), inverting the bounds into
hardware requirements (provision, inverse, frontier, resources), and their plots and CLI."""
