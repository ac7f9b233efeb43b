"""One module per `gatekeep` command: each reads its options and wires the stages (read, name, judge,
ask, record) together; what a command knows lives in the stages, not here."""
