"""kubevec backends package."""
