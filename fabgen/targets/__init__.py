"""Renderers, one module per target; the registry and its order live in fabgen.render."""

from fabgen.targets.base import Artifacts, RenderContext, Target

__all__ = ["Artifacts", "RenderContext", "Target"]
