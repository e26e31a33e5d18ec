"""Which platforms exist and in which order: one registry module per face, each the only code
that imports the platforms' folders (with static imports, so the layer check sees every edge)."""
