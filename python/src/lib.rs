//! `sgm_rdp._sgm_rdp`: the Rust side of the Python package. It adds no numerics of its
//! own: `query` is the command line's `batch` line, `run` is the command line itself
//! (`--json`), and the phase functions call the engine's heterogeneous composition. So
//! Python gets the CLI's numbers bit for bit, and every refusal is the CLI's one-line
//! reason, raised as `sgm_rdp.SgmRdpError` (a `ValueError`). A Rust panic would surface
//! as pyo3's `PanicException`, never an abort; the engine's API does not panic.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use sgm_rdp::engine::pld::{self, Phase};
use sgm_rdp::engine::{self, Adjacency, Conversion, Sgm};

create_exception!(
    _sgm_rdp,
    SgmRdpError,
    PyValueError,
    "Bad input or an answer the accountant refuses: the message names the parameter."
);

fn err(e: impl ToString) -> PyErr {
    SgmRdpError::new_err(e.to_string())
}

/// A job for the computing threads.
type Job = Box<dyn FnOnce() + Send>;

/// Computing threads waiting for a job. They live as long as the process, so the engine's
/// per-thread FFT plans and recycled buffers stay warm from call to call; one more is started
/// when every one is busy (concurrent Python threads, or a call left running by Ctrl-C).
static IDLE: std::sync::Mutex<Vec<std::sync::mpsc::Sender<Job>>> =
    std::sync::Mutex::new(Vec::new());

fn computing_thread() -> std::sync::mpsc::Sender<Job> {
    let (tx, rx) = std::sync::mpsc::channel::<Job>();
    let back = tx.clone();
    std::thread::spawn(move || {
        while let Some(job) = soon(|| rx.try_recv().ok()).or_else(|| rx.recv().ok()) {
            job();
            if let Ok(mut idle) = IDLE.lock() {
                idle.push(back.clone());
            }
        }
    });
    tx
}

/// How long each side of a hand-over looks for the other's message before it sleeps: the
/// computing thread for the next job after one, the caller for its answer. A call answered
/// in microseconds (a closed form) otherwise paid two sleeps and wake-ups, each tens of µs on
/// a 2-core machine: 120 µs a call from Python where the engine took 20 µs
/// (`benches/python_bench.py`'s `python_call_overhead`). A longer call costs the waiting side
/// this much of a core once.
const SPIN: std::time::Duration = std::time::Duration::from_micros(200);

/// `poll()`'s first `Some` within [`SPIN`], yielding the core between polls; None after.
fn soon<T>(mut poll: impl FnMut() -> Option<T>) -> Option<T> {
    let start = std::time::Instant::now();
    loop {
        if let Some(v) = poll() {
            return Some(v);
        }
        if start.elapsed() >= SPIN {
            return None;
        }
        std::thread::yield_now();
    }
}

/// Runs `work` on a computing thread while this one waits with the GIL released, checking
/// for signals every 50 ms: Ctrl-C raises KeyboardInterrupt at once (hardening 4 #2: a long
/// call ignored it until it returned); the interrupted work ends, unobserved, within the
/// engine's per-call budget.
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    work: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    use std::sync::mpsc::RecvTimeoutError;
    let (tx, rx) = std::sync::mpsc::channel();
    let mut job: Job = Box::new(move || {
        let _ = tx.send(work());
    });
    loop {
        let idle = IDLE.lock().ok().and_then(|mut v| v.pop());
        match idle.unwrap_or_else(computing_thread).send(job) {
            Ok(()) => break,
            Err(back) => job = back.0, // a thread that ended: another takes it
        }
    }
    let mut rx = rx;
    loop {
        // (The receiver travels into the GIL-free closure and back: it is Send, not Sync.)
        let (got, back) = py.allow_threads(move || {
            let quick = soon(|| match rx.try_recv() {
                Ok(v) => Some(Ok(v)),
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    Some(Err(RecvTimeoutError::Disconnected))
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => None,
            });
            let got =
                quick.unwrap_or_else(|| rx.recv_timeout(std::time::Duration::from_millis(50)));
            (got, rx)
        });
        rx = back;
        match got {
            Ok(v) => return Ok(v),
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(err("the computation ended without an answer"))
            }
        }
    }
}

/// One `sgm-rdp batch` line: a JSON object in, a JSON object out (`{"error": …}` on
/// refusal), exactly as the command line answers it.
#[pyfunction]
fn query(py: Python<'_>, line: String) -> PyResult<String> {
    interruptible(py, move || sgm_rdp::query::line(&line))
}

/// The command line: `args` without the program name; the JSON text, or the one-line
/// reason raised.
#[pyfunction]
fn run(py: Python<'_>, args: Vec<String>) -> PyResult<String> {
    interruptible(py, move || sgm_rdp::query::run(&args))?.map_err(err)
}

/// One phase: (sample_rate, noise_multiplier, steps, adjacency, dataset_size, max_batch);
/// the last two (truncated Poisson) are 0 when absent.
type PhaseTuple = (f64, f64, u64, String, u64, u64);

fn phases_of(phases: &[PhaseTuple]) -> PyResult<Vec<Phase>> {
    phases
        .iter()
        .map(|(q, sigma, steps, adjacency, n, b)| {
            let sgm = Sgm::new(*q, *sigma).map_err(err)?;
            let adj = Adjacency::parse(adjacency).ok_or_else(|| {
                err(format!(
                    "adjacency must be 'add-remove' or 'replace-one', got '{adjacency}'"
                ))
            })?;
            let p = if *b > 0 {
                if adj != Adjacency::AddRemove {
                    return Err(err(
                        "truncated Poisson is available under add/remove adjacency only",
                    ));
                }
                Phase::truncated(sgm, *n, *b, *steps)
            } else {
                Phase::new(sgm, *steps).map(|p| p.with_adjacency(adj))
            };
            p.map_err(err)
        })
        .collect()
}

/// Tight ε at δ for heterogeneous phases: (upper, lower), both certified.
#[pyfunction]
fn epsilon_phases(py: Python<'_>, phases: Vec<PhaseTuple>, delta: f64) -> PyResult<(f64, f64)> {
    let ph = phases_of(&phases)?;
    let a = interruptible(py, move || pld::epsilon_phases(&ph, delta))?.map_err(err)?;
    Ok((a.epsilon.upper, a.epsilon.lower))
}

/// Tight δ at ε for heterogeneous phases: (upper, lower), both certified.
#[pyfunction]
fn delta_phases(py: Python<'_>, phases: Vec<PhaseTuple>, epsilon: f64) -> PyResult<(f64, f64)> {
    let ph = phases_of(&phases)?;
    let a = interruptible(py, move || pld::delta_phases(&ph, epsilon))?.map_err(err)?;
    Ok((a.delta.upper, a.delta.lower))
}

/// The composed exact RDP of heterogeneous Poisson/add-remove phases at each of `orders`
/// (the default 156 when None): (the orders, Σ steps·RDP per order).
fn composed_rdp(
    phases: &[(f64, f64, u64)],
    orders: Option<Vec<f64>>,
) -> PyResult<(Vec<f64>, Vec<f64>)> {
    let orders = engine::params::check_orders(&orders.unwrap_or_else(engine::default_orders))
        .map_err(err)?;
    if phases.is_empty() {
        return Err(err("no phases to compose"));
    }
    let mut total = vec![0.0; orders.len()];
    for &(q, sigma, steps) in phases {
        let sgm = Sgm::new(q, sigma).map_err(err)?;
        let steps = engine::params::check_steps(steps).map_err(err)?;
        let r = engine::rdp::rdp_orders(&sgm, &orders).map_err(err)?;
        for (t, v) in total.iter_mut().zip(r) {
            *t += steps as f64 * v;
        }
    }
    Ok((orders, total))
}

/// Exact RDP of heterogeneous Poisson/add-remove phases, composed over `orders` (the
/// default 156 when None) and converted at δ (improved conversion): (ε, its order).
#[pyfunction]
#[pyo3(signature = (phases, delta, orders=None))]
fn rdp_epsilon_phases(
    phases: Vec<(f64, f64, u64)>,
    delta: f64,
    orders: Option<Vec<f64>>,
) -> PyResult<(f64, f64)> {
    let delta = engine::params::check_delta(delta).map_err(err)?;
    let (orders, total) = composed_rdp(&phases, orders)?;
    let mut best = (f64::INFINITY, orders[0]);
    for (&a, &r) in orders.iter().zip(&total) {
        let e = engine::accountant::eps_from_rdp(r, a, delta, Conversion::Improved);
        if e < best.0 {
            best = (e, a);
        }
    }
    Ok((best.0.max(0.0), best.1))
}

/// Exact RDP of heterogeneous Poisson/add-remove phases at ε: (δ, its order), the smallest
/// over `orders` (the default 156 when None), improved conversion.
#[pyfunction]
#[pyo3(signature = (phases, epsilon, orders=None))]
fn rdp_delta_phases(
    phases: Vec<(f64, f64, u64)>,
    epsilon: f64,
    orders: Option<Vec<f64>>,
) -> PyResult<(f64, f64)> {
    if !(epsilon.is_finite() && epsilon >= 0.0) {
        return Err(err(format!(
            "epsilon must be a finite number >= 0, got {epsilon}"
        )));
    }
    let (orders, total) = composed_rdp(&phases, orders)?;
    let mut best = (f64::INFINITY, orders[0]);
    for (&a, &r) in orders.iter().zip(&total) {
        let l = engine::accountant::ln_delta_from_rdp(r, a, epsilon, Conversion::Improved);
        if l < best.0 {
            best = (l, a);
        }
    }
    Ok((engine::math::exp(best.0).min(1.0), best.1))
}

#[pymodule]
fn _sgm_rdp(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SgmRdpError", m.py().get_type::<SgmRdpError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(query, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(epsilon_phases, m)?)?;
    m.add_function(wrap_pyfunction!(delta_phases, m)?)?;
    m.add_function(wrap_pyfunction!(rdp_epsilon_phases, m)?)?;
    m.add_function(wrap_pyfunction!(rdp_delta_phases, m)?)?;
    Ok(())
}
