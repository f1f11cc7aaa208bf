"""The privacy score ("diameter") of an extractor depth (PyTorch, imported lazily).

The paper's equations (6)-(9) were lost from its text; this is the reading fedsec follows.
For a target ``x`` and the extractor ``g_θ^j`` (the first ``j`` hidden layers),

    s_j = mean_x  min_θ̃  max_x'  [ ||x' - x||² - λ ||g_θ̃^j(x') - g_θ^j(x)||² ]

``x'`` searches for the farthest input that keeps the embedding (a large diameter: many inputs
map to the target's embedding, so inverting it is hard); ``θ̃`` searches, near ``θ``, for the
parameters that shrink that diameter most (the score must survive a small change of weights).
Computed by alternating clipped gradient steps: ``x'`` starts at ``x`` plus Laplace noise of
scale ``noise`` (0.001) and ascends; ``θ̃`` starts at ``θ`` and descends, and is projected back
into the ball ``||θ̃ - θ|| <= radius * ||θ||`` after each step ("kept near θ"; radius
0.0001: at 0.01 the weights' own drift, times λ, swamps the diameter). λ = 10,000. The text
lost the step sizes; 0.0001 here for both: the λ term's curvature is about ``2 λ σ²`` for the
extractor's singular values σ, so plain gradient steps much above ``1 / λ`` diverge.

One ``θ̃`` serves the whole batch of targets (``min_θ̃ mean_x``, which is at least the paper's
``mean_x min_θ̃``: the score is an upper bound of the per-target minimum). A larger score means
more privacy by this measure; whether it tracks what an inversion recovers is what the audit
tests (:mod:`fedsec.attacks.fedgraph`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fedsec.nn import require_torch
from fedsec.protocols.fedgraph.models import WHAT, extractor_module


@dataclass(frozen=True)
class ScoreSettings:
    """The bi-level search: steps, λ, start noise, step sizes, clipping, ``θ̃``'s radius."""

    steps: int = 50
    lam: float = 10_000.0
    noise: float = 0.001
    lr_x: float = 0.0001
    lr_theta: float = 0.0001
    clip_x: float = 1.0
    clip_theta: float = 1.0
    radius: float = 0.0001


def diameter_score(model: Any, x: np.ndarray, depth: int, settings: ScoreSettings,
                   rng: np.random.Generator) -> float:
    """``s_depth`` of ``model``'s extractor over the targets ``x`` (see the module)."""
    torch = require_torch(WHAT)
    import copy

    g = extractor_module(model, depth)
    g_tilde = copy.deepcopy(g)
    for p in g.parameters():
        p.requires_grad_(False)
    theta = [p.detach().clone() for p in g.parameters()]
    theta_norm = float(torch.sqrt(sum((t ** 2).sum() for t in theta)))
    X = torch.as_tensor(np.ascontiguousarray(x), dtype=torch.float32)
    start = rng.laplace(0.0, settings.noise, size=x.shape)
    X_adv = (X + torch.as_tensor(start, dtype=torch.float32)).requires_grad_(True)
    with torch.no_grad():
        target = g(X)

    def objective() -> Any:
        gap = ((X_adv - X) ** 2).sum(dim=1)
        drift = ((g_tilde(X_adv) - target) ** 2).sum(dim=1)
        return (gap - settings.lam * drift).mean()

    opt_x = torch.optim.SGD([X_adv], lr=settings.lr_x)
    opt_t = torch.optim.SGD(g_tilde.parameters(), lr=settings.lr_theta)
    for _ in range(settings.steps):
        opt_x.zero_grad()
        (-objective()).backward()   # ascent in x'
        torch.nn.utils.clip_grad_norm_([X_adv], settings.clip_x)
        opt_x.step()
        opt_t.zero_grad()
        objective().backward()      # descent in θ̃
        torch.nn.utils.clip_grad_norm_(list(g_tilde.parameters()), settings.clip_theta)
        opt_t.step()
        with torch.no_grad():       # keep θ̃ near θ
            params = list(g_tilde.parameters())
            delta = torch.sqrt(sum(((p - t) ** 2).sum() for p, t in zip(params, theta,
                                                                         strict=True)))
            limit = settings.radius * theta_norm
            if float(delta) > limit:
                for p, t in zip(params, theta, strict=True):
                    p.copy_(t + (p - t) * (limit / float(delta)))
    with torch.no_grad():
        return float(objective())


def choose_depth(scores: list[float], keep: float) -> int:
    """The paper's rule ("the largest j that maintains a relatively high score"), made
    concrete: the largest depth ``j`` (1-based) whose score keeps at least ``keep`` of the
    range between the worst and the best depth, ``(s_j - min s) / (max s - min s) >= keep``.
    The rule reads the scores' shape only, so it holds whatever their sign (on these
    networks they are negative: the weights' drift outweighs the diameter).

    Examples
    --------
    >>> choose_depth([1.0, 0.9, 0.6, 0.2, 0.1], 0.5)
    3
    >>> choose_depth([-0.3, -1.1, -3.6, -11.0, -28.0], 0.75)
    3
    >>> choose_depth([2.0, 2.0], 0.75)
    2
    """
    values = np.asarray(scores, dtype=np.float64)
    low, high = float(values.min()), float(values.max())
    if not high > low:
        return len(values)
    kept = (values - low) / (high - low) >= keep
    return int(np.flatnonzero(kept).max()) + 1
