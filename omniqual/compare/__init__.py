"""compare layer."""
