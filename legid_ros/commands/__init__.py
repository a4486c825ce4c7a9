"""Subcommands of the ``legid`` command."""
