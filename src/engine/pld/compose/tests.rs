use super::*;

/// The powers split over two threads are the serial ones, bit for bit, written and
/// multiplied in (what keeps the native answers the wasm's).
#[test]
fn the_split_powers_are_the_serial_ones_bit_for_bit() {
    let n = 1 << 12;
    let z: Vec<Complex<f64>> = (0..n)
        .map(|k| {
            let k = k as f64;
            Complex::new(cos(0.37 * k) * 0.999, sin(0.11 * k) * 0.5)
        })
        .collect();
    let start: Vec<Complex<f64>> = (0..=n / 2)
        .map(|k| Complex::new(1.0 + 1e-3 * k as f64, -0.25))
        .collect();
    for (t, first) in [(3.0, true), (100.0, true), (14063.0, false), (2.5, false)] {
        let mut serial = (start.clone(), start.clone());
        let mut split = (start.clone(), start.clone());
        spectra_powers_in(&z, (&mut serial.0, &mut serial.1), (t, first), false);
        spectra_powers_in(&z, (&mut split.0, &mut split.1), (t, first), true);
        let bits = |v: &[Complex<f64>]| -> Vec<(u64, u64)> {
            v.iter().map(|c| (c.re.to_bits(), c.im.to_bits())).collect()
        };
        assert_eq!(bits(&serial.0), bits(&split.0), "t = {t}");
        assert_eq!(bits(&serial.1), bits(&split.1), "t = {t}");
        assert!(serial.0 != start, "t = {t}: nothing written");
    }
}

/// [`times_exp`] against s·e^x computed another way, e^{(ln s + x)/2} squared (its own
/// rounding, up to ~2u·|ln s + x| relatively, is the tolerance's second term), over masses
/// from subnormal to 1 and exponents across f64's range: both branches (the product, and
/// the logs beyond |x| > 700 or for a subnormal s) where the result is a normal number.
/// (Fails with the product off by 1e-12.)
#[test]
fn times_exp_is_s_times_e_to_the_x() {
    let mut u = crate::engine::math::uniform(7);
    let mut branches = [0usize; 2];
    for _ in 0..20_000 {
        let s = if u() < 0.05 {
            f64::MIN_POSITIVE * u()
        } else {
            exp(-700.0 * u())
        };
        let x = 1400.0 * u() - 700.0 + if u() < 0.2 { 60.0 } else { 0.0 };
        let got = times_exp(s, x);
        let h = 0.5 * (ln(s) + x);
        let want = exp(h) * exp(h);
        if !(f64::MIN_POSITIVE..1e300).contains(&want) || s < 1e-300 {
            continue;
        }
        branches[usize::from(x.abs() <= 700.0)] += 1;
        let tol = 4e-15 + 2.0 * U * (ln(s) + x).abs();
        assert!(
            (got / want - 1.0).abs() <= tol,
            "s {s:e} x {x}: {got:e} vs {want:e}"
        );
    }
    assert!(branches.iter().all(|&n| n > 100), "{branches:?}");
}

/// The tilt solves' moments ([`tilt_moments`]: sums in four lanes, divided once) and [`tilt`]'s
/// are the plain sums of the masses' exps, point by point, to 1e-12 of their scale, on a dense
/// and a sparse lattice (5003 points: the lanes' remainder too), at tilts from steep negative
/// to steep positive.
#[test]
fn tilt_moments_are_tilts() {
    for every in [1usize, 9] {
        let ln_w: Vec<f64> = (0..5003)
            .map(|i| {
                if i % every != 0 {
                    return f64::NEG_INFINITY;
                }
                let x = i as f64 / 5000.0;
                -40.0 * (x - 0.2).powi(2) - if i % 5 == 0 { 2.0 } else { 0.0 }
            })
            .collect();
        for lambda in [-300.0, -1.0, 0.0, 0.37, 25.0, 4e3] {
            for (k_lo, d) in [(-40i64, 1e-3), (7, 2.5e-5)] {
                let t = tilt(k_lo, &ln_w, lambda, d);
                let (ln_m, mean, var) = tilt_moments(k_lo, &ln_w, lambda, d);
                // The plain sums, point by point, from the logs.
                let w: Vec<f64> = (ln_w.iter().enumerate())
                    .map(|(i, &l)| l + lambda * (k_lo + i as i64) as f64 * d)
                    .collect();
                let mx = w.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = w.iter().map(|&x| exp(x - mx)).collect();
                let s: f64 = e.iter().sum();
                let m: f64 = (e.iter().enumerate())
                    .map(|(i, &x)| x * (k_lo + i as i64) as f64)
                    .sum::<f64>()
                    / s;
                let v: f64 = (e.iter().enumerate())
                    .map(|(i, &x)| x * ((k_lo + i as i64) as f64 - m).powi(2))
                    .sum::<f64>()
                    / s;
                let close = |a: f64, b: f64, scale: f64| (a - b).abs() <= 1e-12 * scale;
                let spread = v.sqrt().max(1.0);
                for (name, (a, b, c)) in [
                    ("moments", (ln_m, mean, var)),
                    ("tilt", (t.ln_m, t.mean, t.var)),
                ] {
                    assert!(
                        close(a, mx + ln(s), (mx + ln(s)).abs().max(1.0)),
                        "{name} ln m, λ {lambda}: {a} vs {}",
                        mx + ln(s)
                    );
                    assert!(
                        close(b, m, spread + m.abs()),
                        "{name} mean, λ {lambda}: {b} vs {m}"
                    );
                    assert!(
                        close(c, v, v.max(1.0)),
                        "{name} var, λ {lambda}: {c} vs {v}"
                    );
                }
            }
        }
    }
}

/// The recurrence's cumulant, the log-space one and the sparse one bound the plain
/// log-sum-exp from above, and tightly, over lattices with masses spanning 600 orders
/// of magnitude and tilts large enough that the geometric weights underflow (where it
/// falls back to log space); a lattice with one mass in 16 takes the sparse path.
#[test]
fn fast_cumulant_is_a_tight_upper_bound() {
    let cases = [
        (7usize, 1.0, 1),
        (1000, 40.0, 1),
        (12_415, 600.0, 1),
        (70_000, 5.0, 1),
    ];
    for (len, spread, every) in cases.into_iter().chain([(40_000, 30.0, 16)]) {
        let ln_w: Vec<f64> = (0..len)
            .map(|i| {
                let x = i as f64 / len as f64;
                if i % every != 0 {
                    return f64::NEG_INFINITY;
                }
                -spread * (x - 0.3).powi(2) - if i % 7 == 0 { 3.0 } else { 0.0 }
            })
            .collect();
        let tl = tilt(-13, &ln_w, 0.0, 1.0);
        assert_eq!(tl.nz.is_some(), every > 1);
        for t in [
            -7e4, -2.0, -0.05, -1e-4, 0.0, 1e-6, 3e-3, 0.2, 0.9, 5.0, 2e6,
        ] {
            let x0 = -13.0 - tl.mean;
            let e: Vec<f64> = (tl.ln_p.iter().enumerate())
                .map(|(i, &l)| l + t * (x0 + i as f64))
                .collect();
            let mx = e.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let exact = mx + ln(e.iter().map(|&x| exp(x - mx)).sum::<f64>());
            for (name, got) in [
                ("fast", cumulant(-13, &tl, t)),
                ("logs", cumulant_logs(-13, &tl.ln_p, tl.mean, t)),
            ] {
                assert!(got >= exact, "{name} len {len} t {t}: {got} < {exact}");
                assert!(
                    got - exact <= 1e-9 * exact.abs().max(1.0),
                    "{name} len {len} t {t}: {got} vs {exact}"
                );
            }
        }
    }
}

/// The reversed reading's prefix sums give the direct sum Σ_{KΔ < −ε} p(K)(e^{−KΔ} − e^ε)
/// plus the ledger's charge M·e^{−θε}, at tilts λ ≤ −1 and ε inside, at the ends of and
/// beyond the window.
#[cfg(full_engine)]
#[test]
fn reversed_reading_is_the_direct_sum() {
    let (d, k0) = (0.01, -250i64);
    let ln_p: Vec<f64> = (0..400)
        .map(|i| -0.5 * ((i as f64 - 180.0) / 40.0).powi(2) - 7.0)
        .collect();
    for lambda in [-1.0, -1.7, -6.0] {
        let tilted = tilted_logs(&ln_p, k0, lambda, d);
        let mx = tilted.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let a: Vec<f64> = tilted.iter().map(|&x| exp(x - mx)).collect();
        let ln_lost = -30.0;
        let c = Composed::from_parts(d, lambda, k0, (&a, mx), (&a, mx), 0.0, ln_lost, (0.0, 1.0));
        for eps in [0.0f64, 4e-3, 0.5, 0.73, 1.2, 2.49, 2.5, 3.0] {
            let direct: f64 = (0..400)
                .map(|i| {
                    let l = (k0 + i as i64) as f64 * d;
                    exp(ln_p[i]) * (exp(-l) - exp(eps)).max(0.0)
                })
                .sum::<f64>()
                + exp(ln_lost + (1.0 + lambda) * eps);
            let (got, lower) = c.delta(eps);
            assert_eq!(lower, 0.0);
            assert!(
                (got - direct).abs() <= 1e-12 * direct.max(1e-300),
                "λ {lambda} ε {eps}: {got:e} vs {direct:e}"
            );
        }
    }
}

/// The truncated tail bound is a bound: T = 4 steps of a sparse heavy-tailed lattice
/// (a dense bulk and point masses doubling out to 2¹³), its exact 4-fold law by direct
/// convolution, and the tail beyond a against T·P(D > u) + exp(T·K_u(t) − t·a).
#[test]
fn truncated_tail_bound_covers_the_exact_tail() {
    let len = 8193;
    let ln_w: Vec<f64> = (0..len)
        .map(|i| match i {
            0..=40 => -0.01 * (i as f64 - 20.0).powi(2),
            _ if (i as u32).is_power_of_two() => -3.0 - 0.6 * log2(i as f64),
            _ => f64::NEG_INFINITY,
        })
        .collect();
    let tl = tilt(0, &ln_w, 0.0, 1.0);
    assert!(tl.nz.is_some());
    let steps = 4usize;
    let mut law = vec![1.0];
    for _ in 0..steps {
        let mut next = vec![0.0; law.len() + len - 1];
        for (i, &a) in law.iter().enumerate() {
            for &j in tl.nz.as_ref().unwrap() {
                next[i + j as usize] += a * tl.p[j as usize];
            }
        }
        law = next;
    }
    let mean = steps as f64 * tl.mean;
    for a in [30.0, 100.0, 500.0, 3000.0, 9000.0] {
        let exact: f64 = (law.iter().enumerate())
            .filter(|(k, _)| *k as f64 - mean >= a)
            .map(|(_, &p)| p)
            .sum();
        let mut best = f64::INFINITY;
        for c in [1.5, 2.0] {
            for cp in [8.0, 16.0, 32.0] {
                let (u, t) = (a / c, cp * c / a);
                let (k, tail) = cumulant_truncated(0, &tl, t, u);
                let b = (steps as f64 * tail) + exp(steps as f64 * k - t * a);
                assert!(b >= exact, "a {a} c {c}: {b} < {exact}");
                best = best.min(b);
            }
        }
        // And it is a useful bound: within a few times the single-big-jump tail.
        // Useful where one large step makes the tail (not in the bulk, a = 30, nor
        // where only two of the largest would reach, a = 9000): within 5× of it.
        if (100.0..=3000.0).contains(&a) {
            assert!(best <= 5.0 * exact, "a {a}: {best} vs {exact}");
        }
    }
}

/// Where [`beyond_any_window`] says no window passes, Chernoff's bound is at least the
/// allowance on one side at every tilt — computed as the window check computes it (the
/// cumulant from above), over 400 tilts of each sign from 1e-9 to 10 per lattice point and at
/// half-widths down to a sixteenth — so the check it spares would have failed; it does fire on
/// a heavy tail, and not on a light one whose windows pass.
#[test]
fn a_window_beyond_reach_fails_chernoffs_check_at_every_tilt() {
    // A light bulk and, optionally, a heavy upper tail reaching 30,000 points.
    let lattice = |heavy: bool| -> Vec<f64> {
        (0..32_000)
            .map(|i| {
                let x = i as f64;
                let bulk = -0.5 * ((x - 1000.0) / 150.0).powi(2);
                let tail = if heavy {
                    -4.0 - 2.0 * ln_1p(x / 1000.0) - x / 20000.0
                } else {
                    f64::NEG_INFINITY
                };
                bulk.max(tail)
            })
            .collect()
    };
    // The least of −|t|·a + T·K(t) over 400 tilts of sign `s`, 1e-9 … 10 per lattice point.
    let least_side = |tl: &Tilted, steps: f64, a: f64, s: f64| {
        (0..400)
            .map(|j| s * 1e-9 * exp(10.0 * j as f64 / 399.0 * ln(10.0)))
            .map(|t| -t.abs() * a + steps * cumulant(-500, tl, t))
            .fold(f64::INFINITY, f64::min)
    };
    let ln_alias = ln(ALIAS);
    let mut fired = 0;
    for (heavy, steps, a) in [
        (true, 6.0, 30_000.0),
        (true, 10.0, 40_000.0),
        (true, 40.0, 30_000.0),
        (true, 100.0, 20_000.0),
        (true, 400.0, 131_000.0),
        (false, 40.0, 20_000.0),
        (false, 6.0, 65_000.0),
    ] {
        let tl = tilt(-500, &lattice(heavy), 0.0, 1.0);
        let beyond = beyond_any_window(-500, &tl, steps, a, ALIAS);
        if !heavy {
            assert!(
                !beyond,
                "a light lattice put beyond reach (T {steps}, a {a})"
            );
            // And its check passes there (the window holds it).
            let (up, down) = (
                least_side(&tl, steps, a, 1.0),
                least_side(&tl, steps, a, -1.0),
            );
            assert!(up < ln_alias && down < ln_alias, "T {steps}, a {a}");
            continue;
        }
        if !beyond {
            continue;
        }
        fired += 1;
        for shrink in [1.0, 0.5, 1.0 / 16.0] {
            let a = a * shrink;
            let (up, down) = (
                least_side(&tl, steps, a, 1.0),
                least_side(&tl, steps, a, -1.0),
            );
            assert!(
                up >= ln_alias || down >= ln_alias,
                "T {steps}, a {a}: sides {up}, {down} below ln(alias) {ln_alias}"
            );
        }
    }
    assert!(
        fired >= 2,
        "the heavy tail never put beyond reach ({fired})"
    );
}

/// A double-double number (hi + lo, |lo| ≤ ½ulp(hi)): the reference powers below carry
/// ~1e-31 relative rounding a product, far below the bound they check.
#[derive(Clone, Copy)]
struct Dd(f64, f64);

/// a + b exactly as hi + lo (Knuth's two-sum).
fn two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    let bb = s - a;
    Dd(s, (a - (s - bb)) + (b - bb))
}

/// a·b exactly as hi + lo (Dekker's product with Veltkamp's split; no fused multiply-add).
fn two_prod(a: f64, b: f64) -> Dd {
    let split = |x: f64| {
        let c = 134_217_729.0 * x; // 2^27 + 1
        let hi = c - (c - x);
        (hi, x - hi)
    };
    let p = a * b;
    let ((ah, al), (bh, bl)) = (split(a), split(b));
    Dd(p, ((ah * bh - p) + ah * bl + al * bh) + al * bl)
}

impl Dd {
    fn add(self, o: Dd) -> Dd {
        let s = two_sum(self.0, o.0);
        let lo = s.1 + self.1 + o.1;
        two_sum(s.0, lo)
    }
    fn mul(self, o: Dd) -> Dd {
        let p = two_prod(self.0, o.0);
        let lo = p.1 + (self.0 * o.1 + self.1 * o.0);
        two_sum(p.0, lo)
    }
    fn neg(self) -> Dd {
        Dd(-self.0, -self.1)
    }
}

/// z^t in double-double complex arithmetic, by squaring.
fn dd_pow((re, im): (f64, f64), t: u64) -> (Dd, Dd) {
    let cmul =
        |(a, b): (Dd, Dd), (c, d): (Dd, Dd)| (a.mul(c).add(b.mul(d).neg()), a.mul(d).add(b.mul(c)));
    let (mut acc, mut base, mut k) = ((Dd(1.0, 0.0), Dd(0.0, 0.0)), (Dd(re, 0.0), Dd(im, 0.0)), t);
    while k > 0 {
        if k & 1 == 1 {
            acc = cmul(acc, base);
        }
        base = cmul(base, base);
        k >>= 1;
    }
    acc
}

/// [`pow`] by squaring against z^t in double-double arithmetic (an independent reference to
/// ~1e-30 relatively): within 3.0001·(t − 1)·u of |z^t| for whole t from 2 to 5·10⁹ (past
/// u32), |z| from 1 down to where |z|^t is e^{−600}, at every angle; the polar form it
/// replaced is checked against the same reference within its own (11t + 1500)·u. (Fails with
/// the exponent off by one: z^{t−1} is |1/z − 1| ≫ 1e-6 away; or with t − 1 products'
/// bound for a tree that took 2(t − 1).)
#[test]
fn whole_powers_by_squaring_are_within_their_products_bound() {
    let mut u = crate::engine::math::uniform(11);
    let mut worst = 0.0f64;
    for &t in &[
        2u64,
        3,
        65,
        100,
        782,
        14_063,
        100_000,
        1_000_000,
        123_456_789,
        5_000_000_000,
    ] {
        for _ in 0..300 {
            let c = 600.0 * u();
            let r = exp(-c / t as f64);
            let th = 2.0 * std::f64::consts::PI * (u() - 0.5);
            let z = Complex::new(r * cos(th), r * sin(th));
            let (re, im) = dd_pow((z.re, z.im), t);
            let exact = Complex::new(re.0 + re.1, im.0 + im.1);
            // (Relative errors in units of the larger part: |z^t|² may underflow.)
            let s = exact.re.abs().max(exact.im.abs());
            let mag = (exact / s).norm_sqr().sqrt();
            let rel_of = |w: Complex<f64>| ((w - exact) / s).norm_sqr().sqrt() / mag;
            let got = pow(z, t as f64);
            let rel = rel_of(got);
            let bound = 3.0001 * (t - 1) as f64 * U;
            assert!(rel <= bound, "t = {t}, z = {z}: {rel:e} > {bound:e}");
            worst = worst.max(rel / bound);
            // The polar form, as `pow` takes a fractional t.
            let ln_r = 0.5 * ln(z.norm_sqr());
            let (m, a) = (exp(t as f64 * ln_r), t as f64 * atan2(z.im, z.re));
            let polar = Complex::new(m * cos(a), m * sin(a));
            let rel_polar = rel_of(polar);
            let bound_polar = (11.0 * t as f64 + 1500.0) * U;
            assert!(
                rel_polar <= bound_polar,
                "t = {t}: polar {rel_polar:e} > {bound_polar:e}"
            );
        }
    }
    // (The bound is not vacuous: some power uses a fair share of it.)
    assert!(worst > 1e-3, "worst {worst:e} of the bound");
}
