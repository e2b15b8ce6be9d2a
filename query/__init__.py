"""kubevec query package."""
