"""Stored agreement reports arrive with the agreement issue."""
