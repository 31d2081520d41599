"""Subcommands of the `regrapht` CLI, one module each (see regrapht.cli)."""
