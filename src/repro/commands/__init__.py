"""Command-line subcommands; see repro.cli."""
