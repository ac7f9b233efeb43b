"""Stage 6, containment: running a line under bubblewrap, where it can change only the working tree."""
