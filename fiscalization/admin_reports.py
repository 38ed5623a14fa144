"""Admin of dumping reports."""
