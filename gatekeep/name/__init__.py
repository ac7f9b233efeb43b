"""Stage 2, naming: each simple command gets its name (`npm run build --watch` is `npm run build`)
and what it does, seen through wrappers (`sudo`, `env`, `bash -c`), from the data in tools/."""
