"""The optimisation program: its variables and rows, assembled from the criteria's
blocks, and the trade-off objects that write the objective and their constraints."""
