"""Stage 3b, reviewing: a program of the user's choosing judges a line that would ask against
plain-language descriptions (reviewer.py); only a high-confidence verdict changes the outcome,
and never that of a deny, a loss, a secret read or a protected write."""
