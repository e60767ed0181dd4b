"""Command-line tools: tinytc-opt (and later the tinytc offline compiler)."""
