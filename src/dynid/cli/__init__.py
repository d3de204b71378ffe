"""Thin typer commands: they wire the library together and print with rich; no algorithm here."""
