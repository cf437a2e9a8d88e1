//! "What your library reports": the ε that Opacus and dp_accounting print for the
//! current run, next to ours, and copy-ready code with the current values.

use super::{fmt_num, Inputs};
use crate::engine::{default_orders, Conversion, Error, Run, Sgm};

/// Opacus' RDP accountant's orders (`opacus.accountants.rdp.DEFAULT_ALPHAS`):
/// 1.1, 1.2, …, 10.9, then 12, 13, …, 63.
pub fn opacus_orders() -> Vec<f64> {
    let mut v: Vec<f64> = (1..100).map(|x| 1.0 + x as f64 / 10.0).collect();
    v.extend((12..64).map(|x| x as f64));
    v
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct LibraryRow {
    pub tool: &'static str,
    /// The ε that tool reports (None while the tight accountant is computing).
    pub epsilon: Option<f64>,
    pub note: String,
}

/// The table for the current run. `pld` is the tight bracket (upper, lower) when known.
pub fn rows(i: &Inputs, pld: Option<(f64, f64)>) -> Result<Vec<LibraryRow>, Error> {
    let sgm = Sgm::new(i.q, i.sigma)?;
    let grid = |orders: Vec<f64>| -> Result<f64, Error> {
        Ok(Run::new(sgm, i.steps, orders)?
            .epsilon(i.delta, Conversion::Improved)?
            .grid_value)
    };
    let ours_rdp = Run::with_default_orders(sgm, i.steps)?
        .epsilon(i.delta, Conversion::Improved)?
        .value;
    let tight = pld.map(|p| p.0);
    Ok(vec![
        LibraryRow {
            tool: "Opacus, PrivacyEngine default (PRV accountant)",
            epsilon: tight,
            note: "≈ the tight value: its ε_upper estimate is typically 0.1–3 % above it".into(),
        },
        LibraryRow {
            tool: "Opacus, accountant=\"rdp\"",
            epsilon: Some(grid(opacus_orders())?),
            note: "RDP on its 151 orders (1.1–10.9, 12–63), best order".into(),
        },
        LibraryRow {
            tool: "dp_accounting RdpAccountant",
            epsilon: Some(grid(default_orders())?),
            note: "RDP on its 156 orders (up to 1024), best order".into(),
        },
        LibraryRow {
            tool: "dp_accounting PLDAccountant",
            epsilon: tight,
            note: "≈ the tight value at its default grid 1e-4; can be far above it on long runs with tiny q".into(),
        },
        LibraryRow {
            tool: "sgm-rdp, exact RDP",
            epsilon: Some(ours_rdp),
            note: "exact per-step RDP, continuous α (never above the grids)".into(),
        },
        LibraryRow {
            tool: "sgm-rdp, tight (PLD)",
            epsilon: tight,
            note: match pld {
                Some((u, l)) => format!(
                    "certified upper bound; bracket [{}, {}]",
                    fmt6(l),
                    fmt6(u)
                ),
                None => "computing…".into(),
            },
        },
    ])
}

/// Why the numbers differ, in one line.
pub const WHY: &str =
    "RDP → (ε, δ) is a bound, 8–9 % above the tight value on typical DP-SGD runs; \
the PLD/PRV accountants compute the tight value up to their discretization (ours is certified \
from both sides). All assume Poisson sampling and add/remove adjacency.";

fn fmt6(x: f64) -> String {
    if (1e-3..1e6).contains(&x) {
        format!("{x:.6}")
    } else {
        fmt_num(x)
    }
}

/// Python literal for a float (round-trips: Rust's shortest representation).
fn py(x: f64) -> String {
    let s = format!("{x:?}");
    if s.contains('e') && !s.contains('.') {
        s.replacen('e', ".0e", 1)
    } else {
        s
    }
}

/// Copy-ready code with the current values: (title, Python source).
pub fn snippets(i: &Inputs, target_epsilon: f64) -> Vec<(&'static str, String)> {
    let (q, s, t, d, e) = (
        py(i.q),
        py(i.sigma),
        i.steps,
        py(i.delta),
        py(target_epsilon),
    );
    vec![
        (
            "Opacus: train with these values, or calibrate σ",
            format!(
                "from opacus import PrivacyEngine\n\
                 from opacus.accountants.utils import get_noise_multiplier\n\
                 \n\
                 # sample_rate = batch_size / dataset_size = {q}; steps = {t}\n\
                 privacy_engine = PrivacyEngine()  # accountant=\"prv\" (the default)\n\
                 model, optimizer, data_loader = privacy_engine.make_private(\n    \
                     module=model,\n    \
                     optimizer=optimizer,\n    \
                     data_loader=data_loader,\n    \
                     noise_multiplier={s},\n    \
                     max_grad_norm=1.0,\n\
                 )\n\
                 # ... train for {t} steps, then:\n\
                 epsilon = privacy_engine.get_epsilon(delta={d})\n\
                 \n\
                 # The noise multiplier for a target epsilon:\n\
                 sigma = get_noise_multiplier(\n    \
                     target_epsilon={e},\n    \
                     target_delta={d},\n    \
                     sample_rate={q},\n    \
                     steps={t},\n    \
                     accountant=\"prv\",\n\
                 )\n"
            ),
        ),
        (
            "dp_accounting: the PLD accountant on this run",
            format!(
                "import dp_accounting\n\
                 \n\
                 event = dp_accounting.PoissonSampledDpEvent(\n    \
                     sampling_probability={q},\n    \
                     event=dp_accounting.GaussianDpEvent(noise_multiplier={s}),\n\
                 )\n\
                 accountant = dp_accounting.pld.PLDAccountant()\n\
                 accountant.compose(event, {t})\n\
                 print(accountant.get_epsilon(target_delta={d}))\n"
            ),
        ),
    ]
}
