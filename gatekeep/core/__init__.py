"""What every stage shares: small records, errors, gatekeep's own paths and data, caches, atomic
writes, JSON text, showing untrusted text, time budgets. Imports nothing from the stages."""
