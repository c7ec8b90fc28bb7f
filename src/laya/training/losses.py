"""The published fine-tuning objectives (``laya.train``'s ``soft_ce_loss`` and ``rlcd_loss``) and
the noise schedule of RLCD, on padded option logits (docs/training.md, "The published loop").

RLCD samples Gaussian perturbations of the detached logits, rewards each sampled distribution with
the strictly proper :func:`~laya.engine.scores.proper_reward`, and pushes the logits towards the
better samples (a policy gradient on the Gaussian log-density), plus the soft cross-entropy.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..engine.scores import proper_reward
from ..errors import InvalidRequest

__all__ = ["Rlcd", "rlcd_loss", "sigma_at", "soft_ce_loss"]

_MASKED = -1e4  # what a padded option's logit reads as (the model's own masking value)


def _masked_log_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return logits.float().masked_fill(~mask.bool(), _MASKED).log_softmax(-1)


def soft_ce_loss(logits: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean over rows of the cross-entropy of ``target`` [B, K] (a distribution over each row's
    real options, ``mask`` [B, K]) under the softmax of ``logits`` [B, K]."""
    real = mask.bool()
    log_p = _masked_log_softmax(logits, real)
    return -(target.float() * log_p * real).sum(-1).mean()


def rlcd_loss(
    logits: torch.Tensor,
    target: torch.Tensor,
    mask: torch.Tensor,
    qtype: torch.Tensor,
    sigma: float,
    samples: int = 4,
    w_sph: float = 0.75,
    w_rps: float = 1.0,
) -> torch.Tensor:
    """The RLCD objective, a scalar: ``samples`` draws of N(0, sigma²) noise on the detached
    logits (zero-mean over each row's real options), each rewarded by ``proper_reward`` (log
    score + ``w_sph`` spherical − ``w_rps`` RPS on score rows), advantages normalised across the
    draws, the policy gradient on the Gaussian log-density, plus :func:`soft_ce_loss`."""
    if not sigma > 0 or isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise InvalidRequest(
            f"rlcd_loss: sigma must be above 0 and samples a whole number of at least 1, got "
            f"sigma={sigma!r}, samples={samples!r}"
        )
    real = mask.bool()
    m = real.float()
    base = logits.float()
    noise = torch.randn((samples, *base.shape), device=base.device) * sigma * m
    noise = noise - (noise.sum(-1, keepdim=True) / m.sum(-1, keepdim=True).clamp(min=1.0)) * m
    drawn = base.detach() + noise
    q = drawn.masked_fill(~real, _MASKED).softmax(-1)
    rewards = torch.stack(
        [proper_reward(q[s], target.float(), qtype, m, w_sph, w_rps) for s in range(samples)]
    )
    advantage = rewards - rewards.mean(0, keepdim=True)
    if samples > 1:
        advantage = advantage / (rewards.std(0, keepdim=True) + 1e-6)
    log_density = -(((drawn - base) * m) ** 2).sum(-1) / (2 * sigma * sigma)
    policy = -(advantage.detach() * log_density).mean()
    return policy + soft_ce_loss(logits, target, mask)


def sigma_at(epoch: int, epochs: int, start: float, end: float) -> float:
    """RLCD's noise scale in ``epoch`` (0-based) of ``epochs``: linear from ``start`` to ``end``."""
    if epochs <= 1:
        return float(start)
    share = min(max(epoch, 0), epochs - 1) / (epochs - 1)
    return float(start + (end - start) * share)


@dataclass(frozen=True)
class Rlcd:
    """RLCD for a whole training run (``laya.training.train.train``'s ``rlcd``): ``samples``
    draws per row, the noise annealed from ``sigma_start`` to ``sigma_end`` (:func:`sigma_at`)."""

    samples: int = 4
    sigma_start: float = 0.4
    sigma_end: float = 0.1

    def sigma(self, epoch: int, epochs: int) -> float:
        """The noise scale of ``epoch`` (1-based, as the training loop counts) of ``epochs``."""
        return sigma_at(epoch - 1, epochs, self.sigma_start, self.sigma_end)
