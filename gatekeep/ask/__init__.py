"""Stage 4, asking: the question on the terminal (once / always / deny), answered on purpose only."""
