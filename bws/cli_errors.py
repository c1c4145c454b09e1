"""What the command line's commands raise on bad input."""


class CliError(Exception):
    """Bad input on the command line: printed as a message, exit code 2."""
