"""Stage 5, recording: the audit log, remembered approvals and rules the person adds."""
