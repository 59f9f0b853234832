"""Configuration plumbing shared by entry points (gin files and bindings)."""
