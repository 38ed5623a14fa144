"""Admin of the enforcement procedure."""
