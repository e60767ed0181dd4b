"""Function passes; each lives in its own module and is registered by name in registry.py."""
