"""deploy layer."""
