"""The check that a model has something to move (nv > 0) before kernels are generated.

A model whose joints are all fixed has nq = nv = 0: every kernel would take and return
zero-length arrays, which C99 forbids (``T q[0]``), and there are no dynamics to compute. The
usual cause is a lone body (a quadrotor, a free-floating object) read without a floating
base, hence the hint.
"""

from __future__ import annotations

from symgen.errors import ModelError
from symgen.model import Model


def require_moving_joint(model: Model) -> None:
    """Raise :class:`ModelError` when ``model`` has no moving joint (nv = 0)."""
    if model.nv == 0:
        raise ModelError(
            f"model '{model.name}' has no moving joint (nv = 0), so it has no kernels to "
            "generate; for a free-flying body use --floating-base (Python: "
            "load(path, floating_base=True))",
            model.source,
        )


__all__ = ["require_moving_joint"]
