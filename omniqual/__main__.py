"""``python -m omniqual`` runs the CLI."""

from omniqual.cli.main import main

main()
