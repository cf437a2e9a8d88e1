"""A drop-in accountant for Google's dp_accounting interface.

`SgmRdpAccountant` is a `dp_accounting.PrivacyAccountant`: jax-privacy, TF Privacy and
dp_accounting code that takes an accountant can take it. It composes

* `PoissonSampledDpEvent(q, GaussianDpEvent(sigma))` (add/remove-one, or replace-one
  with `NeighboringRelation.REPLACE_ONE`: sigma stays the noise multiplier and the sum
  moves by up to 2C, as in dp_accounting's own PLD accountant),
* `GaussianDpEvent(sigma)` (q = 1),
* `TruncatedSubsampledGaussianDpEvent` (add/remove-one),
* `SelfComposedDpEvent`, `ComposedDpEvent`, `NoOpDpEvent`,

and answers `get_epsilon(delta)` / `get_delta(epsilon)` with the tight accountant's
certified upper bound (`supports()` is False for anything else); where the tight accountant
refuses within its per-call budget (e.g. a thousand distinct noise multipliers), with exact
RDP's certified bound and a `SgmRdpWarning` saying so. Requires dp_accounting
(`pip install dp-accounting`).
"""

import math
from typing import List, Optional

from dp_accounting import dp_event
from dp_accounting import privacy_accountant

from . import Phase, SgmRdpError, _rdp_fallback, delta_phases, epsilon_phases

NeighborRel = privacy_accountant.NeighboringRelation
CompositionErrorDetails = privacy_accountant.PrivacyAccountant.CompositionErrorDetails


class SgmRdpAccountant(privacy_accountant.PrivacyAccountant):
    """dp_accounting's `PrivacyAccountant` answered by sgm-rdp's certified PLD bracket."""

    def __init__(self, neighboring_relation: NeighborRel = NeighborRel.ADD_OR_REMOVE_ONE):
        super().__init__(neighboring_relation)
        self._phases: List[Phase] = []
        self._non_private = False

    def _adjacency(self) -> Optional[str]:
        return {
            NeighborRel.ADD_OR_REMOVE_ONE: "add-remove",
            NeighborRel.REPLACE_ONE: "replace-one",
        }.get(self.neighboring_relation)

    def _maybe_compose(self, event, count: int, do_compose: bool):
        def unsupported(why: str):
            return CompositionErrorDetails(invalid_event=event, error_message=why)

        adjacency = self._adjacency()
        if adjacency is None:
            return unsupported(f"neighboring relation {self.neighboring_relation} is not supported")
        if isinstance(event, dp_event.NoOpDpEvent):
            return None
        if isinstance(event, dp_event.NonPrivateDpEvent):
            if do_compose:
                self._non_private = True
            return None
        if isinstance(event, dp_event.SelfComposedDpEvent):
            return self._maybe_compose(event.event, event.count * count, do_compose)
        if isinstance(event, dp_event.ComposedDpEvent):
            for e in event.events:
                r = self._maybe_compose(e, count, do_compose)
                if r is not None:
                    return r
            return None
        if isinstance(event, dp_event.GaussianDpEvent):
            return self._add(
                event, Phase(event.noise_multiplier, 1.0, count, adjacency), count, do_compose
            )
        if isinstance(event, dp_event.PoissonSampledDpEvent):
            inner = event.event
            if not isinstance(inner, dp_event.GaussianDpEvent):
                return unsupported("only a GaussianDpEvent can be Poisson-sampled here")
            return self._add(
                event,
                Phase(inner.noise_multiplier, event.sampling_probability, count, adjacency),
                count, do_compose,
            )
        if isinstance(event, dp_event.TruncatedSubsampledGaussianDpEvent):
            if adjacency != "add-remove":
                return unsupported("truncated Poisson is answered under add/remove-one only")
            return self._add(
                event,
                Phase(event.noise_multiplier, event.sampling_probability, count, adjacency,
                      event.dataset_size, event.truncated_batch_size),
                count, do_compose,
            )
        return unsupported(f"{type(event).__name__} is not supported by SgmRdpAccountant")

    def _add(self, event, phase: Phase, count: int, do_compose: bool):
        """Compose `count` steps of `phase`, after checking the event's fields: a NaN, an
        infinity, a negative noise multiplier or a rate outside [0, 1] is refused by name
        (it used to be skipped, and the accountant then said epsilon = 0)."""
        name = type(event).__name__
        why = None
        sigma, q = phase.noise_multiplier, phase.sample_rate
        if not isinstance(sigma, (int, float)) or not math.isfinite(sigma) or sigma < 0:
            why = f"{name}: noise_multiplier must be a finite number >= 0, got {sigma!r}"
        elif not isinstance(q, (int, float)) or not math.isfinite(q) or not 0 <= q <= 1:
            why = f"{name}: sampling_probability must be a number in [0, 1], got {q!r}"
        elif not isinstance(count, int) or count < 0:
            why = f"{name}: count must be a whole number >= 0, got {count!r}"
        if why is not None:
            # Malformed, not unsupported: refused by supports() and compose() alike.
            raise SgmRdpError(why)
        if do_compose and count > 0 and q > 0:
            if sigma == 0:
                self._non_private = True
            else:
                self._phases.append(phase)
        return None

    def get_epsilon(self, target_delta: float) -> float:
        if self._non_private:
            return math.inf
        if not self._phases:
            return 0.0
        try:
            return epsilon_phases(self._phases, target_delta).upper
        except SgmRdpError as e:
            # Beyond the tight accountant's budget (e.g. a thousand distinct noise
            # multipliers): exact RDP's certified bound, with a SgmRdpWarning.
            return _rdp_fallback(self._phases, e, delta=target_delta)

    def get_delta(self, target_epsilon: float) -> float:
        if self._non_private:
            return 1.0
        if not self._phases:
            return 0.0
        try:
            return delta_phases(self._phases, target_epsilon).upper
        except SgmRdpError as e:
            return _rdp_fallback(self._phases, e, epsilon=target_epsilon)
