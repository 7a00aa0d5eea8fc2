"""The subcommands of `solar`: each module registers its commands (`register(subparsers)`, flags and
`set_defaults(fn=...)`); `args` holds the argument types and flag groups they share, `run` the
program's contract around one command (one-line errors, exit statuses)."""
