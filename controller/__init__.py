"""kubevec controller package."""
