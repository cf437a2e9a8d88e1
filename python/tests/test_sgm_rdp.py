"""The Python package against the command line (bit for bit), against Google's
dp_accounting 0.6.0 at a fine grid (an independent implementation: its own
discretization and FFT composition), and its two accountants' arithmetic."""

import json
import math
import os
import resource
import subprocess
from types import SimpleNamespace

import pytest

import sgm_rdp
from sgm_rdp import Phase, SgmRdpError

CLI = os.environ.get("SGM_RDP_CLI")
MNIST = dict(noise_multiplier=1.1, sample_rate=256 / 60000, steps=14063, delta=1e-5)


def cli(*args):
    assert CLI, "SGM_RDP_CLI must point at the sgm-rdp binary (scripts/python.sh sets it)"
    out = subprocess.run([CLI, *args, "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_imports_and_version():
    # The one version (Cargo.toml's [workspace.package]) reaches the wheel.
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "Cargo.toml")) as f:
        cargo = next(l for l in f if l.startswith("version = ")).split('"')[1]
    assert sgm_rdp.__version__ == cargo
    assert issubclass(SgmRdpError, ValueError)


@pytest.mark.parametrize(
    "kw, args",
    [
        (dict(accountant="pld"), ["--accountant", "pld"]),
        (dict(accountant="rdp"), []),
        (dict(accountant="both"), ["--accountant", "both"]),
    ],
)
def test_epsilon_equals_the_cli_bit_for_bit(kw, args):
    ours = sgm_rdp.epsilon(**MNIST, **kw)
    raw = cli("epsilon", "--q", repr(256 / 60000), "--sigma", "1.1", "--steps", "14063",
              "--delta", "1e-5", *args)
    assert ours.raw == raw
    if kw["accountant"] == "pld":
        assert ours.upper == raw["epsilon"] and ours.lower == raw["epsilon_lower"]
    if kw["accountant"] == "both":
        assert ours.upper == raw["epsilon_pld"] and ours.rdp == raw["epsilon"]


def test_schemes_and_other_commands_equal_the_cli():
    s = sgm_rdp.epsilon(1.1, sampling="shuffle", dataset_size=60000, batch_size=256,
                        epochs=60, delta=1e-5)
    raw = cli("epsilon", "--sampling", "shuffle", "--sigma", "1.1", "--dataset-size", "60000",
              "--batch-size", "256", "--epochs", "60", "--delta", "1e-5")
    assert (s.upper, s.lower, s.accountant) == (raw["epsilon"], raw["epsilon_lower"], "band")
    r = sgm_rdp.epsilon(2.0, 0.01, 300, 1e-5, adjacency="replace-one")
    raw = cli("epsilon", "--adjacency", "replace-one", "--q", "0.01", "--sigma", "2.0",
              "--steps", "300", "--delta", "1e-5", "--accountant", "pld")
    assert (r.upper, r.lower, r.adjacency) == (raw["epsilon"], raw["epsilon_lower"], "replace-one")
    fs = sgm_rdp.epsilon(4.0, sampling="fixed-size", adjacency="replace-one",
                         dataset_size=60000, batch_size=256, steps=14063, delta=1e-5)
    raw = cli("epsilon", "--sampling", "fixed-size", "--adjacency", "replace-one",
              "--dataset-size", "60000", "--batch-size", "256", "--sigma", "4.0",
              "--steps", "14063", "--delta", "1e-5")
    assert (fs.upper, fs.lower, fs.accountant) == (raw["epsilon"], None, "rdp")
    c = sgm_rdp.calibrate_sigma(0.01, 1000, 1e-5, 2.0)
    raw = cli("calibrate", "--q", "0.01", "--steps", "1000", "--delta", "1e-5",
              "--epsilon", "2.0", "--accountant", "pld")
    assert c.value == raw["sigma"] and c.epsilon <= 2.0
    cs = sgm_rdp.calibrate_sigma(sampling="shuffle", dataset_size=60000, batch_size=256,
                                 epochs=60, delta=1e-5, epsilon=8.0)
    raw = cli("calibrate", "--sampling", "shuffle", "--dataset-size", "60000", "--batch-size",
              "256", "--epochs", "60.0", "--delta", "1e-5", "--epsilon", "8.0")
    assert cs.value == raw["sigma"] and cs.epsilon <= 8.0
    st = sgm_rdp.calibrate_steps(1.1, 0.01, 1e-5, 2.0)
    assert st.value == cli("calibrate", "--sigma", "1.1", "--q", "0.01", "--delta", "1e-5",
                           "--epsilon", "2.0", "--accountant", "pld", "--target", "steps")["steps"]
    pr = sgm_rdp.profile(1.1, sampling="shuffle", dataset_size=60000, batch_size=256, epochs=60)
    raw = cli("profile", "--sampling", "shuffle", "--sigma", "1.1", "--dataset-size", "60000",
              "--batch-size", "256", "--epochs", "60.0", "--epsilon", "10.0")
    assert [(p.delta_lower, p.delta_upper) for p in pr] == [
        (p["delta"]["lower"], p["delta"]["upper"]) for p in raw["profile"]]
    risk = sgm_rdp.attack_risk(2.0, 0.01, 300, adjacency="replace-one")
    raw = cli("profile", "--adjacency", "replace-one", "--sigma", "2.0", "--q", "0.01",
              "--steps", "300")
    assert risk == {a["fpr"]: a["tpr_max"] for a in raw["attack"]}
    assert all(fpr <= t <= 1 for fpr, t in risk.items())
    d = sgm_rdp.delta(1.0, 0.01, 100, epsilon=1.0)
    raw = cli("delta", "--q", "0.01", "--sigma", "1.0", "--steps", "100", "--epsilon", "1.0",
              "--accountant", "pld")
    assert (d.upper, d.lower) == (raw["delta"], raw["delta_lower"])


# Five runs (q, sigma, T, delta) against dp_accounting's PLD at a fine grid.
RUNS = [
    (256 / 60000, 1.1, 14063, 1e-5),
    (0.01, 1.0, 1000, 1e-5),
    (0.001, 0.8, 10000, 1e-6),
    (0.1, 2.0, 500, 1e-5),
    (0.02, 1.5, 2000, 1e-7),
]


def dp_accounting_bracket(q, sigma, steps, delta, h=1e-4):
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    def eps(pessimistic):
        pld = pld_lib.from_gaussian_mechanism(
            standard_deviation=sigma, sampling_prob=q, value_discretization_interval=h,
            pessimistic_estimate=pessimistic, use_connect_dots=pessimistic)
        return pld.self_compose(steps).get_epsilon_for_delta(delta)

    return eps(False), eps(True)


@pytest.mark.parametrize("q, sigma, steps, delta", RUNS)
def test_cross_check_against_dp_accounting_at_a_fine_grid(q, sigma, steps, delta):
    ours = sgm_rdp.epsilon(sigma, q, steps, delta)
    lo, up = dp_accounting_bracket(q, sigma, steps, delta)
    print(f"\nrun q={q:.6g} sigma={sigma} T={steps} delta={delta:g}: ours [{ours.lower:.6f}, "
          f"{ours.upper:.6f}], dp_accounting (grid 1e-4) [{lo:.6f}, {up:.6f}]")
    # The truth is in both brackets: they overlap, and ours is no wider at the top.
    assert ours.lower <= up and ours.upper >= lo
    assert ours.upper <= up + 1e-3 * ours.upper


def test_drop_in_dp_accounting_accountant():
    from dp_accounting import dp_event, privacy_accountant
    from sgm_rdp.accountant import SgmRdpAccountant

    g = lambda s: dp_event.GaussianDpEvent(s)  # noqa: E731
    ev = dp_event.ComposedDpEvent([
        dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.01, g(1.1)), 100),
        dp_event.PoissonSampledDpEvent(0.02, g(0.9)),
    ])
    acc = SgmRdpAccountant()
    assert acc.supports(ev)
    acc.compose(ev, 2)
    direct = sgm_rdp.epsilon_phases([(1.1, 0.01, 200), (0.9, 0.02, 2)], 1e-5)
    assert acc.get_epsilon(1e-5) == direct.upper
    assert acc.get_delta(direct.upper) == sgm_rdp.delta_phases(
        [(1.1, 0.01, 200), (0.9, 0.02, 2)], direct.upper).upper
    # One phase: the direct single-run call.
    one = SgmRdpAccountant().compose(dp_event.PoissonSampledDpEvent(0.01, g(1.1)), 300)
    assert one.get_epsilon(1e-5) == sgm_rdp.epsilon(1.1, 0.01, 300, 1e-5).upper
    # Replace-one: sigma stays the noise multiplier (the sum moves by 2C).
    rep = SgmRdpAccountant(privacy_accountant.NeighboringRelation.REPLACE_ONE)
    rep.compose(dp_event.PoissonSampledDpEvent(0.01, g(2.0)), 300)
    assert rep.get_epsilon(1e-5) == sgm_rdp.epsilon(2.0, 0.01, 300, 1e-5,
                                                    adjacency="replace-one").upper
    # Truncated Poisson, and what is refused.
    tr = SgmRdpAccountant().compose(dp_event.TruncatedSubsampledGaussianDpEvent(
        dataset_size=5000, sampling_probability=0.01, truncated_batch_size=60,
        noise_multiplier=1.2), 300)
    assert tr.get_epsilon(1e-5) == sgm_rdp.epsilon(
        1.2, 0.01, 300, 1e-5, sampling="truncated-poisson", dataset_size=5000,
        max_batch=60).upper
    assert not SgmRdpAccountant().supports(dp_event.LaplaceDpEvent(1.0))
    assert not SgmRdpAccountant().supports(
        dp_event.PoissonSampledDpEvent(0.1, dp_event.LaplaceDpEvent(1.0)))
    with pytest.raises(privacy_accountant.UnsupportedEventError):
        SgmRdpAccountant().compose(dp_event.LaplaceDpEvent(1.0))
    assert SgmRdpAccountant().compose(dp_event.NonPrivateDpEvent()).get_epsilon(1e-5) == math.inf
    assert SgmRdpAccountant().get_epsilon(1e-5) == 0.0


def test_opacus_style_accountant_without_torch():
    acc = sgm_rdp.OpacusAccountant()
    for _ in range(500):
        acc.step(noise_multiplier=1.1, sample_rate=0.01)
    assert len(acc) == 1 and acc.history == [(1.1, 0.01, 500)]
    assert acc.get_epsilon(1e-5) == sgm_rdp.epsilon(1.1, 0.01, 500, 1e-5).upper
    acc.step(noise_multiplier=0.9, sample_rate=0.01)
    assert len(acc) == 2
    assert acc.get_epsilon(delta=1e-5) == sgm_rdp.epsilon_phases(
        [(1.1, 0.01, 500), (0.9, 0.01, 1)], 1e-5).upper
    state = acc.state_dict()
    assert state["mechanism"] == sgm_rdp.OpacusAccountant.mechanism() == "sgm_rdp_pld"
    with pytest.raises(SgmRdpError):
        sgm_rdp.OpacusAccountant().load_state_dict({"history": [], "mechanism": "rdp"})
    again = sgm_rdp.OpacusAccountant()
    again.load_state_dict(state)
    assert again.history == acc.history and again.get_epsilon(1e-5) == acc.get_epsilon(1e-5)
    # Opacus' DPOptimizer calls the hook after each step.
    fresh = sgm_rdp.OpacusAccountant()
    hook = fresh.get_optimizer_hook_fn(sample_rate=0.01)
    hook(SimpleNamespace(noise_multiplier=1.1, accumulated_iterations=1))
    assert fresh.history == [(1.1, 0.01, 1)]
    assert sgm_rdp.OpacusAccountant().get_epsilon(1e-5) == 0.0


@pytest.mark.parametrize(
    "call, names",
    [
        (lambda: sgm_rdp.epsilon(-1.0, 0.01, 100, 1e-5), "noise_multiplier"),
        (lambda: sgm_rdp.epsilon(1.0, 1.5, 100, 1e-5), "sample_rate"),
        (lambda: sgm_rdp.epsilon(1.0, 0.01, 100, 2.0), "delta"),
        (lambda: sgm_rdp.epsilon(1.0, 0.01, 0, 1e-5), "steps"),
        (lambda: sgm_rdp.epsilon(float("nan"), 0.01, 100, 1e-5), "sigma"),
        (lambda: sgm_rdp.epsilon(1.0, 0.01, 100, 1e-5, accountant="best"), "accountant"),
        (lambda: sgm_rdp.epsilon(1.0, 0.01, 100, 1e-5, sampling="nosuch"), "sampling"),
        (lambda: sgm_rdp.epsilon(1.0, 0.01, 100, 1e-5, sampling="random-allocation"), "random allocation takes"),
        (lambda: sgm_rdp.epsilon("x", 0.01, 100, 1e-5), "noise_multiplier"),
        (lambda: sgm_rdp.epsilon_phases([], 1e-5), "phases"),
        (lambda: sgm_rdp.epsilon_phases([Phase(1.0, 0.01, 1.5)], 1e-5), "steps"),
        (lambda: sgm_rdp.epsilon_phases([(1.0, 0.01, 10, "sideways")], 1e-5), "adjacency"),
    ],
)
def test_bad_input_raises_the_named_error(call, names):
    with pytest.raises(SgmRdpError) as e:
        call()
    assert names in str(e.value)
    assert isinstance(e.value, ValueError)


def test_many_calls_do_not_leak():
    def rss_kb():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    # q = 1: the Gaussian's closed form, so the loop measures the bindings, not the engine.
    for _ in range(2000):
        sgm_rdp.epsilon(2.0, 1.0, 10, 1e-5)
    before = rss_kb()
    for i in range(100_000):
        sgm_rdp.epsilon(2.0, 1.0, 10, 1e-5)
        if i % 10 == 0:
            with pytest.raises(SgmRdpError):
                sgm_rdp.epsilon(-2.0, 1.0, 10, 1e-5)
    grown = rss_kb() - before
    assert grown < 16_000, f"resident memory grew by {grown} kB over 1e5 calls"


def test_accountant_refuses_malformed_events_by_name():
    """Hardening 4 #3: a NaN, infinite, negative or out-of-range field is a named SgmRdpError,
    never a number (a NaN rate used to be skipped and epsilon = 0 returned)."""
    pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event
    from sgm_rdp.accountant import SgmRdpAccountant

    g = dp_event.GaussianDpEvent
    bad = [
        (dp_event.PoissonSampledDpEvent(float("nan"), g(1.0)), "sampling_probability"),
        (dp_event.PoissonSampledDpEvent(-0.1, g(1.0)), "sampling_probability"),
        (dp_event.PoissonSampledDpEvent(1.5, g(1.0)), "sampling_probability"),
        (dp_event.PoissonSampledDpEvent(float("inf"), g(1.0)), "sampling_probability"),
        (dp_event.PoissonSampledDpEvent(0.01, g(float("nan"))), "noise_multiplier"),
        (dp_event.PoissonSampledDpEvent(0.01, g(-1.0)), "noise_multiplier"),
        (dp_event.PoissonSampledDpEvent(0.01, g(float("inf"))), "noise_multiplier"),
        (g(float("nan")), "noise_multiplier"),
        (g(-2.0), "noise_multiplier"),
    ]
    for event, field in bad:
        with pytest.raises(sgm_rdp.SgmRdpError, match=field):
            SgmRdpAccountant().compose(event, 10).get_epsilon(1e-5)
    # A rate of 0 costs nothing; a valid event still answers.
    zero = SgmRdpAccountant().compose(dp_event.PoissonSampledDpEvent(0.0, g(1.0)), 10)
    assert zero.get_epsilon(1e-5) == 0.0
    ok = SgmRdpAccountant().compose(dp_event.PoissonSampledDpEvent(0.01, g(1.0)), 10)
    assert ok.get_epsilon(1e-5) > 0


def test_the_pages_spellings_group_size_in_gdp_and_a_clean_namespace():
    """Issue 61 #9: sampling="shuffled" (the page's and the widget's spelling) is the shuffle
    band; gdp() takes the run's group size and scheme like the command line's gdp; dir()
    lists the package's own names only."""
    kw = dict(dataset_size=50000, batch_size=512, epochs=30, delta=1e-5)
    a = sgm_rdp.epsilon(1.0, sampling="shuffled", **kw)
    b = sgm_rdp.epsilon(1.0, sampling="shuffle", **kw)
    assert (a.upper, a.lower) == (b.upper, b.lower) and a.lower > 15
    g2 = sgm_rdp.gdp(1.0, 0.01, 100, group_size=2)
    assert CLI, "SGM_RDP_CLI must point at the sgm-rdp binary (scripts/python.sh sets it)"
    cli = json.loads(subprocess.run(
        [CLI, "gdp", "--q", "0.01", "--sigma", "1", "--steps", "100", "--group-size", "2",
         "--json"], capture_output=True, text=True, check=True).stdout)
    g1 = sgm_rdp.gdp(1.0, 0.01, 100)
    assert g2.mu == cli["mu"] and g2.mu > g1.mu and g2.mu_lower <= g2.mu
    names = dir(sgm_rdp)
    assert "epsilon" in names and "gdp" in names
    assert not {"json", "Any", "Dict", "dataclass"} & set(names), names


def test_gdp_takes_a_delta():
    """Issue 61 #9: gdp(delta=...) gives the epsilon mu implies there, as `gdp --delta`;
    checked against the Gaussian mechanism's closed-form profile (Balle & Wang 2018,
    Theorem 8) computed here with math.erfc: delta at that epsilon is the delta asked."""
    g = sgm_rdp.gdp(1.0, 0.01, 1000, delta=1e-5)
    assert sgm_rdp.gdp(1.0, 0.01, 1000).epsilon_from_mu is None
    mu, e = g.mu, g.epsilon_from_mu
    phi_bar = lambda z: 0.5 * math.erfc(z / math.sqrt(2))
    d = phi_bar(e / mu - mu / 2) - math.exp(e) * phi_bar(e / mu + mu / 2)
    assert abs(d - 1e-5) <= 1e-11, d
    assert sgm_rdp.epsilon(1.0, 0.01, 1000, 1e-5).upper <= e


def test_a_noise_schedule_that_alternates_answers():
    """Hardening 4 #4: 2,000 steps alternating sigma 1.0/1.1 at q = 0.01 (2,000 history
    entries) is composed as its two distinct phases and answers; it equals 1,000 steps of
    each (composition does not depend on order). It used to be refused mid-training."""
    acc = sgm_rdp.OpacusAccountant()
    for i in range(2000):
        acc.step(noise_multiplier=1.0 if i % 2 == 0 else 1.1, sample_rate=0.01)
    grouped = sgm_rdp.epsilon_phases([(1.0, 0.01, 1000), (1.1, 0.01, 1000)], delta=1e-5)
    assert acc.get_epsilon(1e-5) == grouped.upper


def test_a_calibration_needs_its_target():
    """Issue 61 #9: no silent delta = 1e-5 / epsilon = 1 in the calibrations."""
    with pytest.raises(SgmRdpError, match="epsilon"):
        sgm_rdp.calibrate_sigma(dataset_size=50000, batch_size=512, epochs=30, delta=1e-5)
    with pytest.raises(SgmRdpError, match="delta and epsilon"):
        sgm_rdp.calibrate_sigma(dataset_size=50000, batch_size=512, epochs=30)
    with pytest.raises(SgmRdpError, match="delta"):
        sgm_rdp.calibrate_steps(1.1, 0.01, epsilon=2.0)
    assert sgm_rdp.calibrate_sigma(0.01, 1000, delta=1e-5, epsilon=2.0).value > 0


def test_a_long_call_can_be_interrupted():
    """Hardening 4 #2: Ctrl-C (here SIGALRM raising KeyboardInterrupt, as Python's own SIGINT
    handler does) ends a long call at once instead of after it returns. The same call is
    timed uninterrupted first, so the check is a ratio on this machine, not a fixed time."""
    import signal
    import time

    # (User level at K = 64, q 0.01, T 100 took seconds when this test was written and now
    # answers in ~0.1 s; μ-GDP of a large-dataset run with 10 examples per user takes ~0.8 s.)
    def long_call():
        return sgm_rdp.gdp(0.8, dataset_size=10_000_000, batch_size=1024, epochs=3,
                           group_size=10)

    t0 = time.monotonic()
    long_call()
    full = time.monotonic() - t0

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, full * 0.1)
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            long_call()
        cut = time.monotonic() - t0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert cut < full * 0.6, (cut, full)
    # The module still answers afterwards.
    assert sgm_rdp.epsilon(1.1, 0.01, 100, 1e-5).upper > 0


def test_what_is_not_a_value_is_refused_by_name():
    """Hardening 4 #7: accountant=None (it ran exact RDP silently), a word in a number's place
    ("--help" reached the command line), an int too large for a float (OverflowError), and a
    given max_batch=0 (read as "not truncated") are SgmRdpErrors naming the parameter."""
    with pytest.raises(SgmRdpError, match="accountant"):
        sgm_rdp.epsilon(1.1, 0.01, 100, 1e-5, accountant=None)
    with pytest.raises(SgmRdpError, match="noise_multiplier"):
        sgm_rdp.epsilon("--help", 0.01, 100, 1e-5)
    with pytest.raises(SgmRdpError, match="steps"):
        sgm_rdp.epsilon(1.1, 0.01, 10**400, 1e-5)
    with pytest.raises(SgmRdpError, match="sampling"):
        sgm_rdp.epsilon(1.1, 0.01, 100, 1e-5, sampling="--help")
    with pytest.raises(SgmRdpError, match="max_batch"):
        sgm_rdp.epsilon_phases([Phase(1.1, 0.01, 100, dataset_size=1000, max_batch=0)], 1e-5)
    with pytest.raises(SgmRdpError, match="sample_rate"):
        sgm_rdp.epsilon_phases([Phase(1.1, "abc", 100)], 1e-5)
    # Numbers written as text still read as numbers.
    assert sgm_rdp.epsilon("1.1", 0.01, 100, "1e-5").upper == sgm_rdp.epsilon(1.1, 0.01, 100, 1e-5).upper


P1 = dict(noise_multiplier=1.0, dataset_size=50000, batch_size=512, epochs=30, delta=1e-5)


def test_check_equals_the_cli_field_for_field():
    c = sgm_rdp.check(library="opacus", poisson_sampling=False, **P1)
    args = ["check", "--library", "opacus", "--poisson-sampling", "false"]
    for k, v in P1.items():
        args += ["--" + k.replace("_", "-"), str(v)]
    ref = cli(*args)
    for k, v in ref.items():
        assert c.fields[k] == v, k
    assert c.printed_epsilon < 3.3 < 15 < c.certified_epsilon_lower < c.certified_epsilon
    assert [f["id"] for f in c.findings][0] == "shuffled-as-poisson"


def test_check_opacus_reads_live_objects_duck_typed():
    class RandomSampler:
        pass

    class WeightedRandomSampler:
        num_samples = 1000

    optimizer = SimpleNamespace(noise_multiplier=1.0, max_grad_norm=1.0)
    loader = SimpleNamespace(dataset=range(50000), batch_size=512, drop_last=False,
                             sampler=RandomSampler())
    c = sgm_rdp.check_opacus(optimizer, loader, epochs=30, delta=1e-5)
    assert c.fields == sgm_rdp.check(library="opacus", poisson_sampling=False, shuffle=True,
                                     max_grad_norm=1.0, accountant="prv", drop_last=False,
                                     **P1).fields
    loader.sampler = WeightedRandomSampler()
    w = sgm_rdp.check_opacus(optimizer, loader, epochs=30, delta=1e-5)
    assert w.certified_epsilon is None and "q-from-sampler-length" in [f["id"] for f in w.findings]
    dp_loader = SimpleNamespace(sample_rate=1 / 98)
    p = sgm_rdp.check_opacus(optimizer, dp_loader, epochs=30, delta=1e-5)
    assert p.fields["library_steps"] == 2940 and p.fields["run_sampling"] == "poisson"


def test_check_refuses_by_name():
    with pytest.raises(SgmRdpError, match="library must be"):
        sgm_rdp.check(library="keras", **P1)
    with pytest.raises(SgmRdpError, match="noise_multiplier must be a finite number"):
        sgm_rdp.check(library="opacus", **{**P1, "noise_multiplier": float("nan")})
    with pytest.raises(SgmRdpError, match="unknown key"):
        sgm_rdp.check(library="opacus", bogus=1, **P1)


def test_a_thousand_noise_multipliers_fall_back_to_exact_rdp_and_say_so():
    # Issue 62 #4: 1,000 distinct noise multipliers, 10 steps each, spend the tight
    # accountant's budget; the accountant answers by exact RDP with a warning, and that
    # answer is dp_accounting's own RdpAccountant's on the same events (its 156 orders).
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant

    from sgm_rdp.accountant import SgmRdpAccountant

    acc, ref = SgmRdpAccountant(), rdp_privacy_accountant.RdpAccountant()
    for i in range(1000):
        ev = dp_event.SelfComposedDpEvent(
            dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0 + i * 0.001)), 10)
        acc.compose(ev)
        ref.compose(ev)
    with pytest.warns(sgm_rdp.SgmRdpWarning, match="exact RDP over 1000 phase"):
        e = acc.get_epsilon(1e-5)
    assert e == pytest.approx(ref.get_epsilon(1e-5), rel=1e-6)
    with pytest.warns(sgm_rdp.SgmRdpWarning):
        d = acc.get_delta(e)
    assert d == pytest.approx(1e-5, rel=1e-6)
    # Opacus' interface: the same fallback.
    o = sgm_rdp.OpacusAccountant()
    for i in range(1000):
        for _ in range(10):
            o.step(noise_multiplier=1.0 + i * 0.001, sample_rate=0.01)
    with pytest.warns(sgm_rdp.SgmRdpWarning):
        assert o.get_epsilon(1e-5) == pytest.approx(e, rel=1e-9)


CATALOGUE = [
    dict(library="opacus", poisson_sampling=False, **P1),
    dict(library="opacus", accountant="gdp", **P1),
    dict(library="opacus", sampler="weighted", sampler_num_samples=1000, **P1),
    dict(library="jax_privacy", noise_multiplier=1, dataset_size=1000, batch_size=10,
         accumulation_steps=8, steps=100, delta=1e-5),
    dict(library="jax_privacy", noise_multiplier=1, dataset_size=1000, batch_size=10,
         accumulation_steps=8, accumulation="independent", steps=100, delta=1e-5),
    dict(library="dp_accounting", noise_multiplier=2, sample_rate=1, steps=1, delta=1e-5,
         neighboring="replace_one"),
    dict(library="tf_privacy", noise_multiplier=1, number_of_examples=50000, batch_size=512,
         num_epochs=30, delta=1e-5, drop_last=True),
    dict(library="dp_accounting", noise_multiplier=2, noise_std=2, max_grad_norm=4,
         sample_rate=0.01, steps=1000, delta=1e-5),
]


@pytest.mark.parametrize("config", CATALOGUE)
def test_every_catalogue_row_is_the_clis_check(config):
    args = ["check"]
    for k, v in config.items():
        args += ["--" + k.replace("_", "-"), str(v).lower() if isinstance(v, bool) else str(v)]
    ref = cli(*args)
    got = sgm_rdp.check(**config).fields
    for k, v in ref.items():
        assert got[k] == v, k


def test_printed_values_are_the_libraries_own():
    # dp_accounting 0.6.0 (installed here) computes what dp_accounting and TF Privacy print.
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant

    def rdp_eps(event, delta=1e-5):
        a = rdp_privacy_accountant.RdpAccountant()
        a.compose(event)
        return a.get_epsilon(delta)

    sampled = lambda q, s, t: dp_event.SelfComposedDpEvent(
        dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(s)), t)
    c = sgm_rdp.check(library="dp_accounting", **P1)
    assert c.printed_epsilon == pytest.approx(rdp_eps(sampled(512 / 50000, 1.0, 2930)), rel=1e-6)
    # TF Privacy's statement: sigma / 2 (used_microbatching), ceil(E / q) steps; and each
    # example once per epoch: the Gaussian of sigma / 2 composed ceil(E) times.
    t = sgm_rdp.check(library="tf_privacy", noise_multiplier=1, number_of_examples=50000,
                      batch_size=512, num_epochs=30, delta=1e-5)
    assert t.printed_epsilon == pytest.approx(rdp_eps(sampled(512 / 50000, 0.5, 2930)), rel=1e-6)
    once = dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(0.5), 30)
    assert t.fields["printed_epsilon_once_per_epoch"] == pytest.approx(rdp_eps(once), rel=1e-6)


def test_check_takes_a_dp_event_object():
    from dp_accounting import dp_event

    ev = dp_event.SelfComposedDpEvent(
        dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)), 1000)
    a = sgm_rdp.check(library="dp_accounting", dp_event=ev, delta=1e-5)
    b = sgm_rdp.check(library="dp_accounting", dp_event=repr(ev), delta=1e-5)
    c = sgm_rdp.check(library="dp_accounting", noise_multiplier=1.0, sample_rate=0.01,
                      steps=1000, delta=1e-5)
    assert a.certified_epsilon == b.certified_epsilon == c.certified_epsilon
    assert a.printed_epsilon == c.printed_epsilon


def test_tf_privacys_user_level_printout():
    # TF Privacy's user-level line (max_examples_per_user = k, RDP): Vadhan's Lemma 2.2 with
    # its line search, rebuilt here from dp_accounting's RdpAccountant and SciPy's brentq
    # (the algorithm of compute_dp_sgd_privacy_lib._compute_dp_sgd_user_privacy).
    import math

    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant
    from scipy import optimize

    def example_eps(event, log_delta):
        a = rdp_privacy_accountant.RdpAccountant()
        a.compose(event)
        return a.get_epsilon(math.exp(log_delta))

    def logexpm1(x):
        return x + math.log(-math.expm1(-x))

    def user_eps(event, delta, k):
        def gap(ld):
            e = example_eps(event, ld)
            return ld + logexpm1(k * e) - logexpm1(e) - math.log(delta)

        hi = math.log(delta)
        lo = hi - math.log(10)
        g = gap(lo)
        while g > 0:
            hi = lo - g
            lo = hi - math.log(10)
            g = gap(lo)
        ld = optimize.brentq(gap, lo - g, hi)
        return k * example_eps(event, ld)

    q, s, e, k = 512 / 50000, 2.0, 3, 2
    poisson = dp_event.SelfComposedDpEvent(
        dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(s)), math.ceil(e / q))
    once = dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(s), e)
    c = sgm_rdp.check(library="tf_privacy", noise_multiplier=2, number_of_examples=50000,
                      batch_size=512, num_epochs=3, delta=1e-5, max_examples_per_user=k,
                      used_microbatching=False)
    assert c.fields["printed_user_epsilon"] == pytest.approx(user_eps(poisson, 1e-5, k), rel=1e-6)
    assert c.fields["printed_user_epsilon_once_per_epoch"] == pytest.approx(
        user_eps(once, 1e-5, k), rel=1e-6)


def test_every_scheme_answers_as_the_command_line_does():
    """Issue 61's cross-surface table, Python's side: every scheme x adjacency x group size on
    P1's terms with accountant pld and rdp, epsilon() against the command line's `epsilon
    --json` (the same bits), or a refusal (SgmRdpError) where the command line refuses."""
    assert CLI, "SGM_RDP_CLI must point at the sgm-rdp binary (scripts/python.sh sets it)"
    answered = refused = 0
    for s in ["poisson", "shuffle", "truncated-poisson", "fixed-size", "random-allocation"]:
        for adj in ["add-remove", "replace-one"]:
            for k in [1, 2]:
                for acct in ["pld", "rdp"]:
                    args = [CLI, "epsilon", "--sampling", s, "--adjacency", adj, "--group-size",
                            str(k), "--dataset-size", "50000", "--batch-size", "512", "--epochs",
                            "30", "--sigma", "1", "--delta", "1e-5", "--json"]
                    # Python passes no accountant for the schemes with one answer (their band
                    # or exact RDP), as the command line takes none.
                    if s not in ("shuffle", "fixed-size"):
                        args += ["--accountant", acct]
                    cli = subprocess.run(args, capture_output=True, text=True)
                    try:
                        got = sgm_rdp.epsilon(
                            1.0, sampling=s, adjacency=adj, group_size=k, dataset_size=50000,
                            batch_size=512, epochs=30, delta=1e-5, accountant=acct)
                    except SgmRdpError:
                        assert cli.returncode != 0, (s, adj, k, acct, cli.stdout)
                        refused += 1
                        continue
                    assert cli.returncode == 0, (s, adj, k, acct, cli.stderr)
                    assert got.upper == json.loads(cli.stdout)["epsilon"], (s, adj, k, acct)
                    answered += 1
    assert answered >= 10 and refused >= 10, (answered, refused)


def test_audit_takes_lists_and_numpy_and_answers_as_the_command_line(tmp_path):
    """`audit()` (issue 65): lists and NumPy arrays give the same audit, which is the
    command line's `audit --json` on the same scores; bad scores raise SgmRdpError."""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(7)
    ins = rng.normal(0.6, 1.0, 2000)
    outs = rng.normal(0.0, 1.0, 2000)
    run = dict(noise_multiplier=1.0, sample_rate=0.01, steps=1000)
    a = sgm_rdp.audit(ins, outs, delta=1e-5, **run)
    b = sgm_rdp.audit(ins.tolist(), list(outs), delta=1e-5, **run)
    assert a.fields == b.fields
    assert 0 < a.epsilon_lower <= a.certified_epsilon and a.consistent
    assert a.mu_lower <= a.certified_mu
    (tmp_path / "in.txt").write_text("\n".join(repr(float(x)) for x in ins))
    (tmp_path / "out.txt").write_text("\n".join(repr(float(x)) for x in outs))
    cli_ = cli("audit", "--in", str(tmp_path / "in.txt"), "--out", str(tmp_path / "out.txt"),
               "--delta", "1e-5", "--q", "0.01", "--sigma", "1", "--steps", "1000")
    for k in ("epsilon_lower", "mu_lower", "auc", "certified_epsilon", "verdict"):
        assert cli_[k] == a.fields[k], k
    no_delta = sgm_rdp.audit(ins, outs)
    assert no_delta.epsilon_lower is None and no_delta.mu_lower > 0
    for bad_in, bad_out in [([], [1.0]), ([1.0, float("nan")], [0.0]), ("12", [0.0]),
                            ([[1.0]], [0.0]), ([1.0], [None])]:
        with pytest.raises(SgmRdpError):
            sgm_rdp.audit(bad_in, bad_out)
    with pytest.raises(SgmRdpError):
        sgm_rdp.audit([1.0], [0.0], significance=0.9)
    plan = sgm_rdp.audit_plan(**run, delta=1e-5)
    assert len(plan["rows"]) == 5 and plan["certified_epsilon"] > 0


def test_the_corpus_answers_as_the_command_line_recorded_it():
    """The cross-surface corpus (tests/corpus/lines.jsonl: every command, scheme, adjacency,
    group size and refusal) through the package's query, against the command line's recorded
    answers (tests/corpus/expected.jsonl), byte for byte."""
    import importlib.util
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    spec = importlib.util.spec_from_file_location("corpus", os.path.join(root, "scripts", "corpus.py"))
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    with open(os.path.join(root, "tests", "corpus", "lines.jsonl")) as f:
        lines = f.read().splitlines()
    with open(os.path.join(root, "tests", "corpus", "expected.jsonl")) as f:
        expected = f.read().splitlines()
    assert len(lines) == len(expected) >= 250
    drifted = []
    for i, (line, want) in enumerate(zip(lines, expected)):
        got = sgm_rdp._core.query(line)
        if got != want:
            # Byte for byte (issue 62 #8: the same digits on every surface), and say how far.
            drifted.append(f"line {i + 1}: {corpus.compare(want, got) or 'not byte-identical'}")
    assert not drifted, drifted[:5]


def test_correlated_noise_answers_as_the_command_line():
    """`correlated()` (issue 67): BandMF under b-min-separated participation; the same bracket
    as `sgm-rdp epsilon --strategy ... --json`; one band is DP-SGD (the tight `epsilon()`);
    an explicit matrix equals its band family; what is not accounted raises by name."""
    run = dict(noise_multiplier=1.0, sample_rate=0.1, steps=101, delta=1e-3)
    a = sgm_rdp.correlated("band:4,1,0.5,0.25,0.125", **run)
    c = cli("epsilon", "--strategy", "band:4,1,0.5,0.25,0.125", "--q", "0.1", "--sigma", "1",
            "--steps", "101", "--delta", "1e-3")
    assert a["epsilon"] == c["epsilon"] and a["epsilon_lower"] == c["epsilon_lower"]
    assert a["epsilon_lower"] <= a["epsilon"] and a["bands"] == 4
    one = sgm_rdp.correlated("band:1", **run)
    sgd = sgm_rdp.epsilon(1.0, 0.1, 101, 1e-3)
    assert one["epsilon"] == sgd.upper and one["epsilon_lower"] == sgd.lower
    rows = [[1.0 if i == j else (0.5 if i - j == 1 else 0.0) for j in range(i + 1)]
            for i in range(20)]
    m = sgm_rdp.correlated("matrix", strategy_matrix=rows, noise_multiplier=1.0,
                           sample_rate=0.1, steps=20, delta=1e-3)
    b = sgm_rdp.correlated("band:2,1,0.5", noise_multiplier=1.0, sample_rate=0.1, steps=20,
                           delta=1e-3)
    assert abs(m["epsilon"] - b["epsilon"]) <= 1e-9 * b["epsilon"]
    cal = sgm_rdp.correlated("band:2", sample_rate=0.1, steps=100, delta=1e-3, epsilon=2.0,
                             command="calibrate")
    assert cal["epsilon"] <= 2.0 and cal["sigma"] > 0
    # Poisson sampling at every step: an upper bound by noise splitting, no lower end claimed.
    p = sgm_rdp.correlated("band:2", participation="poisson", **run)
    assert p["bound"].startswith("upper bound") and "epsilon_lower" not in p
    with pytest.raises(sgm_rdp.SgmRdpError, match="unknown participation"):
        sgm_rdp.correlated("band:2", participation="shuffle", **run)
    with pytest.raises(sgm_rdp.SgmRdpError, match="monte_carlo applies to balls-in-bins"):
        sgm_rdp.correlated("tree", monte_carlo=10000, **run)
    # Not banded under Poisson: the operator-norm route, an upper bound.
    assert sgm_rdp.correlated("tree", participation="poisson", **run)["bound"] == \
        "upper bound (operator norm)"
    # BLT and the tree under min-sep: the whole run without amplification.
    t = sgm_rdp.correlated("tree", participation="min-sep:10", **run)
    assert t["bound"].startswith("upper bound") and t["epsilon"] > 0
    blt = sgm_rdp.correlated("blt:0.9:0.3", participation="min-sep:5", noise_multiplier=4.0,
                             sample_rate=1.0, steps=20, delta=1e-3)
    assert blt["bound"].startswith("bracket") and blt["epsilon_lower"] <= blt["epsilon"]
    # Cyclic balls-in-bins with a Monte Carlo estimate beside the bound, labelled as such.
    c = sgm_rdp.correlated("band:4,1,0.5,0.25,0.125", participation="cyclic-bins:10",
                           noise_multiplier=4.0, steps=100, delta=1e-2, monte_carlo=20000)
    est = c["estimate"]
    assert "not a bound" in est["meaning"] and est["interval"][0] <= est["epsilon"] <= c["epsilon"]
    # ... bounded by the common-mode split (a Gaussian every bin shares + random allocation).
    assert c["bound"] == "upper bound (common mode)" and c["common_mode"]["s"] > c["common_mode"]["a"] > 0
    # The privacy profile of a correlated run: 101 points, its delta bracket meeting delta's.
    run2 = dict(sample_rate=0.05, noise_multiplier=1.0, steps=200)
    p = sgm_rdp.correlated("band:2,1,0.5", epsilon=4.0, command="profile", **run2)
    d = sgm_rdp.correlated("band:2,1,0.5", epsilon=1.0, command="delta", **run2)
    pt = p["profile"][25]
    assert len(p["profile"]) == 101 and pt["epsilon"] == 1.0
    assert pt["delta"]["lower"] <= d["delta"] and d["delta_lower"] <= pt["delta"]["upper"]
    # BLT and the tree: the whole run without amplification (an upper bound at q < 1).
    t = sgm_rdp.correlated("tree", participation="min-sep:10", **run)
    assert t["bound"] == "upper bound (no amplification)" and t["sensitivity"] > 1
    blt = sgm_rdp.correlated("blt:0.9:0.3", participation="min-sep:5", noise_multiplier=4.0,
                             sample_rate=1.0, steps=20, delta=1e-3)
    assert blt["bound"].startswith("bracket") and blt["epsilon_lower"] <= blt["epsilon"]
