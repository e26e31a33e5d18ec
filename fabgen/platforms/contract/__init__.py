"""The Platform contract: what the core may ask a network OS, one module per layer it is asked
at (facts, checks, outputs, push). Nothing here names an OS."""
