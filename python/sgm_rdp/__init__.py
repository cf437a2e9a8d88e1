"""sgm_rdp: certified privacy accounting for DP-SGD (the Sampled Gaussian Mechanism).

The same Rust engine as the `sgm-rdp` command line, the page and the JS API; every
number here is the command line's, bit for bit (this module builds the command line's
arguments and reads its JSON answer).

* Exact Rényi DP of the Sampled Gaussian Mechanism (Mironov, Talwar, Zhang, "Rényi
  Differential Privacy of the Sampled Gaussian Mechanism", arXiv:1908.10530), converted
  to (epsilon, delta) — `accountant="rdp"`.
* The tight accountant (`accountant="pld"`, the default here): the privacy-loss
  distribution with a certified bracket — `upper` is a certified upper bound on the true
  epsilon (the number to report), `lower` a certified lower bound ("Connect the Dots",
  Doroshenko et al., PETS 2022; composition by FFT with explicit error terms).
* Batching schemes (`sampling="poisson" | "shuffle" | "truncated-poisson" | "fixed-size"`), adjacency
  (`"add-remove"` or `"replace-one"`), user-level privacy (`group_size`), BandMF
  (`bands`), as on the command line (README: "How batches are drawn").

Parameter names follow Opacus and dp_accounting: `noise_multiplier` (noise std /
clipping norm), `sample_rate`, `steps`, `delta`, `orders`. Bad input raises
`SgmRdpError` (a `ValueError`) whose message names the parameter.
"""

import json
import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _sgm_rdp as _core
from ._sgm_rdp import SgmRdpError, __version__

__all__ = [
    "SgmRdpError",
    "SgmRdpWarning",
    "Epsilon",
    "Delta",
    "Calibration",
    "ProfilePoint",
    "Gdp",
    "Phase",
    "epsilon",
    "delta",
    "calibrate_sigma",
    "calibrate_steps",
    "profile",
    "attack_risk",
    "gdp",
    "epsilon_phases",
    "delta_phases",
    "OpacusAccountant",
    "Check",
    "check",
    "check_opacus",
    "Audit",
    "audit",
    "audit_plan",
    "correlated",
    "__version__",
]


@dataclass(frozen=True)
class Epsilon:
    """epsilon at the given delta. `upper` is the number to report: a certified upper
    bound on the true epsilon. `lower` is a certified lower bound on it (None for the
    exact-RDP accountant alone, whose conversion gives an upper bound only). `rdp` and
    `alpha`: the exact-RDP epsilon and its order when that accountant ran."""

    upper: float
    lower: Optional[float]
    accountant: str
    rdp: Optional[float] = None
    alpha: Optional[float] = None
    grid: Optional[Dict[str, Any]] = None
    sampling: str = "poisson"
    adjacency: str = "add-remove"
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __float__(self) -> float:
        return self.upper


@dataclass(frozen=True)
class Delta:
    """delta at the given epsilon: `upper` certified above, `lower` certified below."""

    upper: float
    lower: Optional[float]
    accountant: str
    rdp: Optional[float] = None
    alpha: Optional[float] = None
    sampling: str = "poisson"
    adjacency: str = "add-remove"
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __float__(self) -> float:
        return self.upper


@dataclass(frozen=True)
class Calibration:
    """The calibrated `noise_multiplier` or `steps`, and the certified epsilon it gives
    (never above the target)."""

    value: float
    epsilon: float
    epsilon_lower: Optional[float]
    accountant: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class ProfilePoint:
    """One point of the privacy profile: the true delta(epsilon) lies in [lower, upper]."""

    epsilon: float
    delta_upper: float
    delta_lower: float


@dataclass(frozen=True)
class Gdp:
    """mu-GDP of the run (Dong, Roth, Su, JRSS-B 2022): the run is mu-GDP for tests with
    FPR and FNR >= `fpr_floor` (certified); `mu_lower` is a mu it is provably not below;
    `regret` is how far the run's trade-off curve is from the Gaussian one (Gomez et al.,
    arXiv 2503.10945); `advantage` bounds TPR - FPR of any membership-inference attack;
    `tradeoff`: (fpr, tpr_max) pairs, certified."""

    mu: float
    mu_lower: float
    regret: float
    fpr_floor: float
    advantage: float
    advantage_lower: float
    tradeoff: List[Tuple[float, float]]
    #: With `delta`: the epsilon the Gaussian trade-off with `mu` has at that delta (valid
    #: where mu is; the run's own epsilon at delta is at most this). None without `delta`.
    epsilon_from_mu: Optional[float] = None


@dataclass(frozen=True)
class Phase:
    """A phase of training for the heterogeneous functions: `steps` steps at
    (`noise_multiplier`, `sample_rate`); `adjacency`; truncated Poisson when
    `dataset_size` and `max_batch` are given."""

    noise_multiplier: float
    sample_rate: float
    steps: int
    adjacency: str = "add-remove"
    dataset_size: Optional[int] = None
    max_batch: Optional[int] = None

    def _tuple(self) -> Tuple[float, float, int, str, int, int]:
        if (self.dataset_size is None) != (self.max_batch is None):
            raise SgmRdpError("truncated Poisson needs both dataset_size and max_batch")
        return (
            float(_num("sample_rate", self.sample_rate)),
            float(_num("noise_multiplier", self.noise_multiplier)),
            _whole("steps", self.steps),
            str(self.adjacency),
            # 0 means "not truncated" to the binding; a given 0 is refused, not read as that.
            0 if self.dataset_size is None else _whole("dataset_size", self.dataset_size),
            0 if self.max_batch is None else _whole("max_batch", self.max_batch),
        )


def _whole(name: str, v: Any, allow_zero: bool = False) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v) or v < (0 if allow_zero else 1):
        raise SgmRdpError(f"{name} must be a whole number >= {0 if allow_zero else 1}, got {v!r}")
    return int(v)


# Keyword → command-line flag. `None` values are left out.
_FLAGS = {
    "noise_multiplier": "--sigma",
    "sample_rate": "--q",
    "steps": "--steps",
    "delta": "--delta",
    "epsilon": "--epsilon",
    "accountant": "--accountant",
    "conversion": "--conversion",
    "sampling": "--sampling",
    "adjacency": "--adjacency",
    "group_size": "--group-size",
    "dataset_size": "--dataset-size",
    "batch_size": "--batch-size",
    "epochs": "--epochs",
    "steps_per_epoch": "--steps-per-epoch",
    "max_batch": "--max-batch",
    "bands": "--bands",
    "target": "--target",
    "tpr": "--tpr",
    "fpr": "--fpr",
    "advantage": "--advantage",
}


# The keywords whose values are names, not numbers.
_TEXT_KEYS = {"accountant", "sampling", "adjacency", "conversion", "target"}


def _num(name: str, v: Any) -> str:
    """A number as the engine reads it; anything else (a bool, a word such as "--help", an
    int too large for a float) is an SgmRdpError naming the parameter (hardening 4 #7)."""
    if isinstance(v, bool):
        raise SgmRdpError(f"{name} must be a number, got {v!r}")
    try:
        return repr(float(v))
    except (TypeError, ValueError, OverflowError):
        raise SgmRdpError(f"{name} must be a number, got {v!r}") from None


def _text(name: str, v: Any) -> str:
    if not isinstance(v, str) or not v or v.startswith("-"):
        raise SgmRdpError(f"{name} must be a name (see the function's documentation), got {v!r}")
    return v


def _run(command: str, **kw: Any) -> Dict[str, Any]:
    args = [command]
    for k, v in kw.items():
        if v is None:
            continue
        if k == "orders":
            args += ["--orders", ",".join(_num("orders", a) for a in v)]
            continue
        flag = _FLAGS[k]
        args += [flag, _text(k, v) if k in _TEXT_KEYS else _num(k, v)]
    args.append("--json")
    return json.loads(_core.run(args))


# The page's and the widget's spellings of a scheme, accepted here too.
_SAMPLING_ALIASES = {"shuffled": "shuffle", "balls-in-bins": "random-allocation"}


def _options(accountant, sampling, adjacency, orders, conversion, **kw):
    """The keyword set shared by epsilon() and delta(): the CLI's defaults are left out,
    so a default call is the plain command."""
    if accountant is None:
        raise SgmRdpError("accountant must be 'pld', 'rdp' or 'both', got None")
    sampling = _SAMPLING_ALIASES.get(sampling, sampling)
    opts = dict(kw)
    # Shuffled batches answer with their own band, fixed-size ones with RDP only.
    opts["accountant"] = accountant if sampling not in ("shuffle", "fixed-size") else None
    opts["sampling"] = None if sampling == "poisson" else sampling
    opts["adjacency"] = None if adjacency == "add-remove" else adjacency
    opts["orders"] = orders
    opts["conversion"] = conversion
    return opts


def _pair(raw: Dict[str, Any], name: str, accountant: str):
    """(upper, lower, rdp, alpha) of an epsilon/delta answer for each accountant."""
    if accountant == "both":
        rdp = raw[name]
        tight = raw.get(f"{name}_pld")
        if tight is None:
            return rdp, None, rdp, raw.get("alpha")
        return min(tight, rdp), raw[f"{name}_pld_lower"], rdp, raw.get("alpha")
    if accountant == "rdp" and raw.get("accountant") is None:
        return raw[name], None, raw[name], raw.get("alpha")
    return raw[name], raw.get(f"{name}_lower"), None, None


def _answer(name: str, kw: Dict[str, Any], accountant: str, sampling: str, adjacency: str):
    """Run `epsilon` or `delta` on the command line and type its answer."""
    raw = _run(name, **kw)
    acct = raw.get("accountant", accountant)
    upper, lower, rdp, alpha = _pair(raw, name, acct)
    common = dict(upper=upper, lower=lower, accountant=acct, rdp=rdp, alpha=alpha,
                  sampling=raw.get("sampling", sampling),
                  adjacency=raw.get("adjacency", adjacency), raw=raw)
    if name == "epsilon":
        return Epsilon(grid=raw.get("pld_grid"), **common)
    return Delta(**common)


def epsilon(
    noise_multiplier: float,
    sample_rate: Optional[float] = None,
    steps: Optional[int] = None,
    delta: float = 1e-5,
    *,
    accountant: str = "pld",
    sampling: str = "poisson",
    adjacency: str = "add-remove",
    orders: Optional[Sequence[float]] = None,
    conversion: Optional[str] = None,
    group_size: Optional[int] = None,
    dataset_size: Optional[int] = None,
    batch_size: Optional[int] = None,
    epochs: Optional[float] = None,
    steps_per_epoch: Optional[int] = None,
    max_batch: Optional[int] = None,
    bands: Optional[int] = None,
) -> Epsilon:
    """epsilon at `delta` after `steps` steps (or `epochs` over `dataset_size` in batches
    of `batch_size`). `accountant`: "pld" (tight, certified bracket; default), "rdp"
    (exact RDP), or "both" (upper = the smaller of the two certified upper bounds)."""
    kw = _options(
        accountant, sampling, adjacency, orders, conversion,
        noise_multiplier=noise_multiplier, sample_rate=sample_rate, steps=steps, delta=delta,
        group_size=group_size, dataset_size=dataset_size, batch_size=batch_size,
        epochs=epochs, steps_per_epoch=steps_per_epoch, max_batch=max_batch, bands=bands,
    )
    return _answer("epsilon", kw, accountant, sampling, adjacency)


def delta(
    noise_multiplier: float,
    sample_rate: Optional[float] = None,
    steps: Optional[int] = None,
    epsilon: float = 1.0,
    *,
    accountant: str = "pld",
    sampling: str = "poisson",
    adjacency: str = "add-remove",
    orders: Optional[Sequence[float]] = None,
    conversion: Optional[str] = None,
    group_size: Optional[int] = None,
    dataset_size: Optional[int] = None,
    batch_size: Optional[int] = None,
    epochs: Optional[float] = None,
    steps_per_epoch: Optional[int] = None,
    max_batch: Optional[int] = None,
    bands: Optional[int] = None,
) -> Delta:
    """delta at `epsilon` after `steps` steps; the accountants as in `epsilon()`."""
    kw = _options(
        accountant, sampling, adjacency, orders, conversion,
        noise_multiplier=noise_multiplier, sample_rate=sample_rate, steps=steps, epsilon=epsilon,
        group_size=group_size, dataset_size=dataset_size, batch_size=batch_size,
        epochs=epochs, steps_per_epoch=steps_per_epoch, max_batch=max_batch, bands=bands,
    )
    return _answer("delta", kw, accountant, sampling, adjacency)


def _calibration(raw: Dict[str, Any], key: str, accountant: str) -> Calibration:
    return Calibration(
        value=raw[key], epsilon=raw["epsilon"], epsilon_lower=raw.get("epsilon_lower"),
        accountant=raw.get("accountant", accountant), raw=raw,
    )


def _targets(delta: Optional[float], epsilon: Optional[float]) -> None:
    """A calibration is to a target the caller names: no silent delta = 1e-5 or epsilon = 1
    (issue 61 #9: `calibrate_sigma(dataset_size=…, batch_size=…, epochs=…)` returned a sigma
    for an epsilon nobody asked for)."""
    missing = [n for n, v in (("delta", delta), ("epsilon", epsilon)) if v is None]
    if missing:
        raise SgmRdpError(f"a calibration needs its target: give {' and '.join(missing)} (delta=…, epsilon=…)")


def calibrate_sigma(
    sample_rate: Optional[float] = None,
    steps: Optional[int] = None,
    delta: Optional[float] = None,
    epsilon: Optional[float] = None,
    *,
    accountant: str = "pld",
    sampling: str = "poisson",
    adjacency: str = "add-remove",
    group_size: Optional[int] = None,
    dataset_size: Optional[int] = None,
    batch_size: Optional[int] = None,
    epochs: Optional[float] = None,
    steps_per_epoch: Optional[int] = None,
    max_batch: Optional[int] = None,
) -> Calibration:
    """The smallest noise_multiplier whose certified epsilon at delta is <= `epsilon`
    (for the sampling scheme and adjacency given, as in `epsilon()`)."""
    _targets(delta, epsilon)
    kw = _options(
        accountant, sampling, adjacency, None, None, sample_rate=sample_rate, steps=steps,
        delta=delta, epsilon=epsilon, group_size=group_size, dataset_size=dataset_size,
        batch_size=batch_size, epochs=epochs, steps_per_epoch=steps_per_epoch,
        max_batch=max_batch,
    )
    return _calibration(_run("calibrate", **kw), "sigma", accountant)


def calibrate_steps(
    noise_multiplier: float,
    sample_rate: Optional[float] = None,
    delta: Optional[float] = None,
    epsilon: Optional[float] = None,
    *,
    accountant: str = "pld",
    sampling: str = "poisson",
    adjacency: str = "add-remove",
    group_size: Optional[int] = None,
    dataset_size: Optional[int] = None,
    batch_size: Optional[int] = None,
    steps_per_epoch: Optional[int] = None,
    max_batch: Optional[int] = None,
) -> Calibration:
    """The most steps whose certified epsilon at delta is <= `epsilon`."""
    _targets(delta, epsilon)
    kw = _options(
        accountant, sampling, adjacency, None, None, noise_multiplier=noise_multiplier,
        sample_rate=sample_rate, delta=delta, epsilon=epsilon, group_size=group_size,
        dataset_size=dataset_size, batch_size=batch_size, steps_per_epoch=steps_per_epoch,
        max_batch=max_batch, target="steps",
    )
    return _calibration(_run("calibrate", **kw), "steps", accountant)


def profile(
    noise_multiplier: float,
    sample_rate: Optional[float] = None,
    steps: Optional[int] = None,
    epsilon_max: float = 10.0,
    *,
    sampling: str = "poisson",
    adjacency: str = "add-remove",
    group_size: Optional[int] = None,
    dataset_size: Optional[int] = None,
    batch_size: Optional[int] = None,
    epochs: Optional[float] = None,
    steps_per_epoch: Optional[int] = None,
    max_batch: Optional[int] = None,
) -> List[ProfilePoint]:
    """The tight privacy profile delta(epsilon) on 101 points of [0, epsilon_max], for the
    sampling scheme and adjacency given (shuffled batches: the certified band)."""
    raw = _run("profile", noise_multiplier=noise_multiplier, sample_rate=sample_rate,
               steps=steps, epsilon=epsilon_max,
               sampling=None if sampling == "poisson" else sampling,
               adjacency=None if adjacency == "add-remove" else adjacency,
               group_size=group_size, dataset_size=dataset_size, batch_size=batch_size,
               epochs=epochs, steps_per_epoch=steps_per_epoch, max_batch=max_batch)
    return [
        ProfilePoint(p["epsilon"], p["delta"]["upper"], p["delta"]["lower"])
        for p in raw["profile"]
    ]


def gdp(
    noise_multiplier: float,
    sample_rate: Optional[float] = None,
    steps: Optional[int] = None,
    *,
    sampling: str = "poisson",
    adjacency: str = "add-remove",
    group_size: Optional[int] = None,
    dataset_size: Optional[int] = None,
    batch_size: Optional[int] = None,
    epochs: Optional[float] = None,
    steps_per_epoch: Optional[int] = None,
    max_batch: Optional[int] = None,
    delta: Optional[float] = None,
) -> Gdp:
    """mu-GDP of the run with its fit, the advantage bound and the trade-off: Poisson
    sampling of one example under add/remove by default, or the run's scheme, adjacency and
    examples per user (`group_size`), as the command line's `gdp` takes them. With `delta`,
    also the epsilon that mu implies there (`epsilon_from_mu`, as `gdp --delta`)."""
    sampling = _SAMPLING_ALIASES.get(sampling, sampling)
    raw = _run(
        "gdp", noise_multiplier=noise_multiplier, sample_rate=sample_rate, steps=steps,
        delta=delta,
        sampling=None if sampling == "poisson" else sampling,
        adjacency=None if adjacency == "add-remove" else adjacency,
        group_size=group_size, dataset_size=dataset_size, batch_size=batch_size,
        epochs=epochs, steps_per_epoch=steps_per_epoch, max_batch=max_batch,
    )
    return Gdp(
        mu=raw["mu"], mu_lower=raw["mu_lower"], regret=raw["regret"],
        fpr_floor=raw["fpr_floor"], advantage=raw["advantage"],
        advantage_lower=raw["advantage_lower"],
        tradeoff=[(t["fpr"], t["tpr_max"]) for t in raw["tradeoff"]],
        epsilon_from_mu=raw.get("epsilon_from_mu"),
    )


def attack_risk(
    noise_multiplier: float,
    sample_rate: Optional[float] = None,
    steps: Optional[int] = None,
    *,
    sampling: str = "poisson",
    adjacency: str = "add-remove",
    group_size: Optional[int] = None,
    dataset_size: Optional[int] = None,
    batch_size: Optional[int] = None,
    epochs: Optional[float] = None,
    steps_per_epoch: Optional[int] = None,
    max_batch: Optional[int] = None,
) -> Dict[float, float]:
    """Certified upper bounds on the true-positive rate of any membership-inference
    attack at false-positive rates 0.1 %, 1 %, 10 % (from the tight privacy profile), for
    the sampling scheme and adjacency given."""
    raw = _run("profile", noise_multiplier=noise_multiplier, sample_rate=sample_rate,
               steps=steps, sampling=None if sampling == "poisson" else sampling,
               adjacency=None if adjacency == "add-remove" else adjacency,
               group_size=group_size, dataset_size=dataset_size, batch_size=batch_size,
               epochs=epochs, steps_per_epoch=steps_per_epoch, max_batch=max_batch)
    return {a["fpr"]: a["tpr_max"] for a in raw["attack"]}


def _phases(phases: Sequence[Any]) -> List[Tuple[float, float, int, str, int, int]]:
    out = []
    for p in phases:
        if not isinstance(p, Phase):
            p = Phase(*p)
        out.append(p._tuple())
    if not out:
        raise SgmRdpError("phases must not be empty")
    return out


def epsilon_phases(phases: Sequence[Any], delta: float) -> Epsilon:
    """Tight epsilon at delta for heterogeneous training: `phases` are `Phase` objects
    or (noise_multiplier, sample_rate, steps) tuples, composed in order."""
    upper, lower = _core.epsilon_phases(_phases(phases), float(delta))
    return Epsilon(upper=upper, lower=lower, accountant="pld")


def delta_phases(phases: Sequence[Any], epsilon: float) -> Delta:
    """Tight delta at epsilon for heterogeneous training (see `epsilon_phases`)."""
    upper, lower = _core.delta_phases(_phases(phases), float(epsilon))
    return Delta(upper=upper, lower=lower, accountant="pld")


class SgmRdpWarning(UserWarning):
    """The tight accountant could not answer within its per-call budget and an accountant
    answered by exact RDP instead (a certified upper bound too, looser)."""


def _rdp_fallback(phases: List["Phase"], error: "SgmRdpError", epsilon: Optional[float] = None,
                  delta: Optional[float] = None) -> float:
    """The exact-RDP answer for `phases` after the tight accountant refused with `error`
    (its work budget: e.g. a thousand distinct noise multipliers), with a SgmRdpWarning;
    re-raised where exact RDP has no route (replace-one or truncated phases) or the
    refusal is not the tight accountant's."""
    import warnings

    message = str(error)
    if "PLD accountant" not in message:
        raise error
    if any(p.adjacency != "add-remove" or p.dataset_size is not None for p in phases):
        raise SgmRdpError(message.replace(
            "; the exact-RDP epsilon still applies",
            "; no exact-RDP route here (replace-one or truncated Poisson phases)"))
    triples = [(float(p.sample_rate), float(p.noise_multiplier), int(p.steps)) for p in phases]
    if delta is not None:
        value, order = _core.rdp_epsilon_phases(triples, delta)
        what = f"epsilon = {value:.6g} at order {order:g}"
    else:
        value, order = _core.rdp_delta_phases(triples, epsilon)
        what = f"delta = {value:.6g} at order {order:g}"
    warnings.warn(
        f"sgm_rdp: the tight accountant refused ({message.split('; the exact-RDP')[0]}); "
        f"answered by exact RDP over {len(phases)} phase(s) instead: {what} "
        "(a certified upper bound, looser than the tight one)",
        SgmRdpWarning, stacklevel=3)
    return value


class OpacusAccountant:
    """An accountant with Opacus' interface (`step(noise_multiplier=, sample_rate=)`,
    `get_epsilon(delta)`, `history`, `len`, `state_dict`), answered by the tight
    accountant: `get_epsilon` returns the certified upper bound. Steps with the same
    (noise_multiplier, sample_rate) are merged into one history entry, as Opacus does.

    With Opacus: `PrivacyEngine(accountant=...)` takes a name, so attach an instance
    instead — `engine.accountant = sgm_rdp.OpacusAccountant()` after constructing the
    engine and before `make_private` (which registers `accountant.get_optimizer_hook_fn`;
    this class provides it)."""

    def __init__(self) -> None:
        self.history: List[Tuple[float, float, int]] = []

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        if self.history and self.history[-1][:2] == (noise_multiplier, sample_rate):
            nm, sr, n = self.history[-1]
            self.history[-1] = (nm, sr, n + 1)
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    def get_epsilon(self, delta: float, **kwargs: Any) -> float:
        """The tight accountant's certified upper bound; where it refuses within its budget
        (many distinct noise multipliers), exact RDP's, with a SgmRdpWarning."""
        if not self.history:
            return 0.0
        phases = [Phase(nm, sr, n) for nm, sr, n in self.history]
        try:
            return epsilon_phases(phases, delta).upper
        except SgmRdpError as e:
            return _rdp_fallback(phases, e, delta=delta)

    def __len__(self) -> int:
        return len(self.history)

    @classmethod
    def mechanism(cls) -> str:
        """The accountant's name (Opacus' `IAccountant.mechanism`)."""
        return "sgm_rdp_pld"

    def state_dict(self, destination: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        d = {} if destination is None else destination
        d["history"] = list(self.history)
        d["mechanism"] = self.mechanism()
        return d

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        if state_dict.get("mechanism") != self.mechanism():
            raise SgmRdpError(
                f"state_dict is for {state_dict.get('mechanism')!r}, not {self.mechanism()!r}")
        self.history = [tuple(h) for h in state_dict["history"]]

    def get_optimizer_hook_fn(self, sample_rate: float):
        """The hook Opacus' DPOptimizer calls after each step (Opacus' own accountants
        provide the same)."""

        def hook_fn(optim):
            self.step(noise_multiplier=optim.noise_multiplier, sample_rate=sample_rate * optim.accumulated_iterations)

        return hook_fn


@dataclass(frozen=True)
class Check:
    """A training configuration checked (`check()`): what its library prints
    (`printed_epsilon`, computed here by a re-implementation of that library's accountant
    and defaults, None with `printed_why` where not emulated), the certified epsilon of the
    code that ran (`certified_epsilon`: a certified upper bound; `certified_epsilon_lower`
    the certified lower end of its bracket or band; None with `certified_why` where no
    certified number exists), and each mismatch (`findings`: dicts with id, severity,
    finding, fix, source; the catalogue is docs/check.md). `fields`: every field."""

    printed_epsilon: Optional[float]
    certified_epsilon: Optional[float]
    certified_epsilon_lower: Optional[float]
    findings: List[Dict[str, str]]
    fields: Dict[str, Any]


def check(**config: Any) -> Check:
    """Check a training configuration given in its library's own terms, e.g.
    `check(library="opacus", noise_multiplier=1.0, dataset_size=50000, batch_size=512,
    epochs=30, delta=1e-5, poisson_sampling=False)` or
    `check(library="jax_privacy", noise_multiplier=1.0, dataset_size=1000, batch_size=10,
    accumulation_steps=8, steps=100, delta=1e-5)`. The keys are the command line's
    `sgm-rdp check` flags (docs/check.md); a bad configuration raises SgmRdpError naming
    the field."""
    line = {"command": "check"}

    def tree(x):
        # A dp_accounting DpEvent object → its to_named_tuple() as JSON.
        if hasattr(x, "to_named_tuple"):
            x = x.to_named_tuple()
        if hasattr(x, "_asdict"):
            return {k: tree(v) for k, v in x._asdict().items()}
        if isinstance(x, (list, tuple)):
            return [tree(v) for v in x]
        return x

    for k, v in config.items():
        if v is None:
            continue
        if k == "dp_event" and not isinstance(v, str):
            line[k] = tree(v)
        elif isinstance(v, bool) or isinstance(v, str):
            line[k] = v
        elif isinstance(v, (int, float)):
            if isinstance(v, float) and not math.isfinite(v):
                raise SgmRdpError(f"{k} must be a finite number, got {v!r}")
            line[k] = v
        else:
            raise SgmRdpError(f"{k} must be a number, a string or a bool, got {type(v).__name__}")
    out = json.loads(_core.query(json.dumps(line)))
    if "error" in out:
        raise SgmRdpError(out["error"])
    return Check(
        printed_epsilon=out.get("printed_epsilon"),
        certified_epsilon=out.get("certified_epsilon"),
        certified_epsilon_lower=out.get("certified_epsilon_lower"),
        findings=out.get("findings", []),
        fields=out,
    )


def check_opacus(optimizer: Any, data_loader: Any, *, delta: float, epochs: Optional[float] = None,
                 steps: Optional[int] = None, accountant: str = "prv",
                 accumulation_steps: int = 1, target_epsilon: Optional[float] = None) -> Check:
    """`check()` of a live Opacus run, read duck-typed (no torch import): the optimizer's
    `noise_multiplier` and `max_grad_norm`; the data loader — Opacus' DPDataLoader (it has
    `sample_rate`: Poisson sampling), or a plain DataLoader whose sampler says how batches
    were drawn (RandomSampler: shuffled; SequentialSampler: fixed order;
    WeightedRandomSampler: weighted, with its `num_samples`), its `batch_size`, `drop_last`
    and `len(dataset)`."""
    config: Dict[str, Any] = dict(
        library="opacus", noise_multiplier=float(optimizer.noise_multiplier),
        max_grad_norm=float(getattr(optimizer, "max_grad_norm", 1.0)), delta=delta,
        epochs=epochs, steps=steps, accountant=accountant, target_epsilon=target_epsilon,
        accumulation_steps=accumulation_steps if accumulation_steps != 1 else None)
    rate = getattr(data_loader, "sample_rate", None)
    if rate is not None:
        config["sample_rate"] = float(rate)
        if steps is None and epochs is not None:
            config["steps"] = int(round(epochs / float(rate)))
            config["epochs"] = None
        return check(**config)
    config["dataset_size"] = len(data_loader.dataset)
    config["batch_size"] = int(data_loader.batch_size)
    config["drop_last"] = bool(getattr(data_loader, "drop_last", False))
    sampler = type(getattr(data_loader, "sampler", None)).__name__
    config["poisson_sampling"] = False
    if sampler == "WeightedRandomSampler":
        config["sampler"] = "weighted"
        config["sampler_num_samples"] = int(data_loader.sampler.num_samples)
    else:
        config["shuffle"] = sampler != "SequentialSampler"
    return check(**config)


@dataclass(frozen=True)
class Audit:
    """An audit of canary scores (`audit()`), docs/audit.md. `epsilon_lower`: the strongest
    empirical lower bound on epsilon at `delta` (two-sample Clopper-Pearson or one-run
    Steinke-Nasr-Jagielski, whichever is larger; None without delta); `mu_lower`: the
    strongest lower bound on mu (every mu-GDP claim below it is rejected). Each holds with
    probability >= 1 - significance under its stated assumptions; neither is a certificate.
    With the run's terms, `certified_epsilon` / `certified_mu` (upper bounds), `consistent`
    (False: the audit's lower bound exceeds the certificate — a bug in the training code or
    its configuration) and `verdict` (one sentence). `fields`: every field (per-method bounds,
    the ROC points with intervals, the AUC)."""

    epsilon_lower: Optional[float]
    mu_lower: float
    auc: float
    certified_epsilon: Optional[float]
    certified_mu: Optional[float]
    consistent: Optional[bool]
    verdict: Optional[str]
    fields: Dict[str, Any] = field(repr=False, compare=False)


def _scores(name: str, xs: Any) -> List[float]:
    """A sequence of finite numbers from a list, a tuple or a 1-D NumPy array (read through
    `tolist()` when it has one; NumPy is not needed)."""
    if hasattr(xs, "tolist"):
        xs = xs.tolist()
    if isinstance(xs, (str, bytes)) or not hasattr(xs, "__iter__"):
        raise SgmRdpError(f"{name} must be a sequence of numbers, got {type(xs).__name__}")
    out = []
    for i, x in enumerate(xs):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise SgmRdpError(f"{name}[{i}] must be a number, got {type(x).__name__}")
        x = float(x)
        if not math.isfinite(x):
            raise SgmRdpError(f"{name}[{i}] must be a finite number, got {x!r}")
        out.append(x)
    return out


def _run_keys(noise_multiplier, sample_rate, steps, sampling, adjacency, **rest) -> Dict[str, Any]:
    sampling = _SAMPLING_ALIASES.get(sampling, sampling)
    keys = {"sigma": noise_multiplier, "q": sample_rate, "steps": steps,
            "sampling": None if sampling == "poisson" else sampling,
            "adjacency": None if adjacency == "add-remove" else adjacency, **rest}
    return {k: v for k, v in keys.items() if v is not None}


def _line(line: Dict[str, Any]) -> Dict[str, Any]:
    for k, v in line.items():
        if isinstance(v, float) and not math.isfinite(v):
            raise SgmRdpError(f"{k} must be a finite number, got {v!r}")
    out = json.loads(_core.query(json.dumps(line)))
    if "error" in out:
        raise SgmRdpError(out["error"])
    return out


def audit(in_scores: Any, out_scores: Any, *, delta: Optional[float] = None,
          significance: float = 0.05, fprs: Optional[Sequence[float]] = None,
          threshold: Optional[float] = None, lower_is_member: bool = False,
          noise_multiplier: Optional[float] = None, sample_rate: Optional[float] = None,
          steps: Optional[int] = None, sampling: str = "poisson",
          adjacency: str = "add-remove", group_size: Optional[int] = None,
          dataset_size: Optional[int] = None, batch_size: Optional[int] = None,
          epochs: Optional[float] = None, steps_per_epoch: Optional[int] = None,
          max_batch: Optional[int] = None) -> Audit:
    """Empirical lower bounds from attack scores of canaries that were trained on
    (`in_scores`) and that were not (`out_scores`) — lists or NumPy arrays; a higher score
    means "more likely a member" unless `lower_is_member` (losses). With `delta`, the epsilon
    bounds at that delta; with the run's terms (`noise_multiplier` with `sample_rate` and
    `steps`, or `dataset_size`, `batch_size`, `epochs`; a scheme as for `epsilon()`), its
    certified epsilon and mu beside them and a verdict. As `sgm-rdp audit` answers."""
    line: Dict[str, Any] = {"command": "audit", "in_scores": _scores("in_scores", in_scores),
                            "out_scores": _scores("out_scores", out_scores),
                            "significance": significance, "lower_is_member": bool(lower_is_member)}
    if delta is not None:
        line["delta"] = delta
    if fprs is not None:
        line["fprs"] = _scores("fprs", fprs)
    if threshold is not None:
        line["threshold"] = threshold
    line.update(_run_keys(noise_multiplier, sample_rate, steps, sampling, adjacency,
                          group_size=group_size, dataset_size=dataset_size,
                          batch_size=batch_size, epochs=epochs,
                          steps_per_epoch=steps_per_epoch, max_batch=max_batch))
    out = _line(line)
    return Audit(epsilon_lower=out.get("epsilon_lower"), mu_lower=out["mu_lower"], auc=out["auc"],
                 certified_epsilon=out.get("certified_epsilon"),
                 certified_mu=out.get("certified_mu"), consistent=out.get("consistent"),
                 verdict=out.get("verdict"), fields=out)


def audit_plan(noise_multiplier: Optional[float] = None, sample_rate: Optional[float] = None,
               steps: Optional[int] = None, *, delta: float, significance: float = 0.05,
               fraction: float = 0.5, sampling: str = "poisson", adjacency: str = "add-remove",
               group_size: Optional[int] = None, dataset_size: Optional[int] = None,
               batch_size: Optional[int] = None, epochs: Optional[float] = None,
               steps_per_epoch: Optional[int] = None,
               max_batch: Optional[int] = None) -> Dict[str, Any]:
    """How many canaries an audit of the run needs to show `fraction` of its certified
    epsilon, and what typical audits of 10^2 ... 10^6 canaries show (estimates for an attack
    as strong as the certificate allows, if the trade-off is Gaussian at the run's mu), with
    the one-run ceiling; as `sgm-rdp audit-plan --json` answers."""
    line = {"command": "audit_plan", "delta": delta, "significance": significance,
            "fraction": fraction}
    line.update(_run_keys(noise_multiplier, sample_rate, steps, sampling, adjacency,
                          group_size=group_size, dataset_size=dataset_size,
                          batch_size=batch_size, epochs=epochs,
                          steps_per_epoch=steps_per_epoch, max_batch=max_batch))
    return _line(line)


def correlated(strategy: str, *, noise_multiplier: Optional[float] = None,
               sample_rate: Optional[float] = None, steps: Optional[int] = None,
               delta: Optional[float] = None, epsilon: Optional[float] = None,
               participation: str = "min-sep",
               strategy_matrix: Optional[Sequence[Sequence[float]]] = None,
               dataset_size: Optional[int] = None, batch_size: Optional[int] = None,
               epochs: Optional[float] = None, command: str = "epsilon",
               monte_carlo: Optional[int] = None) -> Dict[str, Any]:
    """Correlated noise (DP-FTRL / matrix factorization) (docs/correlated-noise.md): under
    b-min-separated cyclic Poisson participation by its exact reduction to DP-SGD steps when
    the strategy is banded with at most k bands; as one Gaussian mechanism without
    amplification when columns overlap (BLT, tree aggregation, fewer partitions than bands);
    a certified upper bound under "poisson", "balls-in-bins:t" (a fresh bin each epoch) or
    "cyclic-bins:t" (jax-privacy's BallsInBinsSampling: one bin for the whole run).
    `monte_carlo` (draws per direction; the bins participations with a "band:" strategy)
    adds a seeded Monte Carlo estimate under "estimate", labelled as such: never a bound.

    `strategy`: "band:b" (b equal coefficients), "band:b,c0,...,c(b-1)" (the first column of
    a banded Toeplitz C), "blt:decay:scale[,decay:scale...]" (buffered linear Toeplitz),
    "tree" (binary-tree aggregation), or "matrix" with `strategy_matrix` (the rows of a
    lower-triangular C); C is normalised to largest column norm 1, so `noise_multiplier` is
    noise std / (clipping norm x largest column norm). `participation`: "min-sep" (as many
    partitions as bands; for BLT and the tree once an epoch from dataset terms, else once),
    "min-sep:k", "poisson", "balls-in-bins:t" or "cyclic-bins:t"; `sample_rate` is the rate within the
    partition a step samples (from `dataset_size`/`batch_size`/`epochs`: k*B/N). "bound" in
    the answer says what its ends mean. `command`: "epsilon" (at `delta`), "delta"
    (at `epsilon`), "calibrate" (the smallest noise_multiplier for `epsilon` at `delta`) or
    "profile" (delta(epsilon) on 101 points of [0, `epsilon`] with the attack bounds).
    Returns the answer's fields: "epsilon" (certified upper bound) and "epsilon_lower" (the
    bracket's lower end), or "delta"/"delta_lower", or "sigma", with the worst partition's
    composition; as `sgm-rdp epsilon --strategy ... --json` answers."""
    line: Dict[str, Any] = {"command": command, "strategy": strategy,
                            "participation": participation}
    if strategy_matrix is not None:
        line["strategy_matrix"] = [_scores(f"strategy_matrix[{i}]", r)
                                   for i, r in enumerate(strategy_matrix)]
    for k, v in (("sigma", noise_multiplier), ("q", sample_rate), ("steps", steps),
                 ("delta", delta), ("epsilon", epsilon), ("dataset_size", dataset_size),
                 ("batch_size", batch_size), ("epochs", epochs), ("monte_carlo", monte_carlo)):
        if v is not None:
            line[k] = v
    return _line(line)


def __dir__():
    """What the package offers (its helpers and typing imports are not part of it)."""
    return sorted(__all__)
